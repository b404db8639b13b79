{-# LANGUAGE TemplateHaskell #-}
{-# OPTIONS_HADDOCK hide #-}
-- | Internal, not a stable API: part of the Template Haskell front end,
-- which GHC runs at compile time.
--
-- The program transformation (Smeding & Vákár, sections 5-9, in its final
-- taping form): every expression of type @t@ becomes a computation of type
-- @AD t'@ that records its primitive operations on the tape, with @Double@
-- read as the dual scalar and every function as a Kleisli arrow per argument.
-- Evaluation is call-by-value.
--
-- Each top-level definition @f@ of arity k gets a worker @f'drw@ taking its k
-- arguments at once (saturated calls go straight to it) and a dual value
-- @f'dr@ of the transformed type, used where @f@ is passed around.
module Numeric.DualRev.Internal.Compile.Transform
  ( differentiableDecs
  , wrapperDec
  , markUsed
  ) where

import Control.Monad (forM, replicateM)
import Data.Char (isAlphaNum)
import Data.Data (Data, cast, gmapQ)
import Data.Graph (SCC (..), stronglyConnComp)
import Data.List (intercalate, isPrefixOf, nub)
import qualified Data.Map as M
import qualified Data.Set as S
import Data.Maybe (mapMaybe)
import Language.Haskell.TH

import Numeric.DualRev.Internal.Compile.Registry (register, reifyR, reifyTypeR)
import Numeric.DualRev.Internal.Compile.Wrap (plainViaDual)
import qualified Numeric.DualRev.Internal.Run.Control.Nested as N
import Numeric.DualRev.Internal.Run.Scalar.AD (AD, unrecordedD)
import Numeric.DualRev.Internal.Compile.Core hiding (Body, Clause, Guard)
import qualified Numeric.DualRev.Internal.Compile.Core as C
import Numeric.DualRev.Internal.Run.Driver.Constant (Constant (..))
import Numeric.DualRev.Internal.Run.Driver.Current (onTape, outsideD)
import Numeric.DualRev.Internal.Compile.Derive (forceInstance, traversableInstances)
import Numeric.DualRev.Internal.Run.Scalar.Number ()
import Numeric.DualRev.Internal.Run.Library.Lazy (enumFromD, enumFromThenD)
import Numeric.DualRev.Internal.Run.Library.Lists (errorAD, outsideInstanceError)
import Numeric.DualRev.Internal.Run.Scalar.Ops (DFractional (..), DNum (..), enumFromThenToD, enumFromToD)
import Numeric.DualRev.Internal.Run.Scalar.Statement (stmtMaxLeaves)
import Numeric.DualRev.Internal.Run.Control.Parallel (parPairD)
import Numeric.DualRev.Internal.Compile.Parse
import Numeric.DualRev.Internal.Compile.Prims
import Numeric.DualRev.Internal.Compile.Inline
import Numeric.DualRev.Internal.Compile.Statement
import Numeric.DualRev.Internal.Compile.Types

------------------------------------------------------------------------------
-- Environment

data Local
  = LVar                 -- ^ a variable holding a dual value
  | LFun Name Int Name   -- ^ a local function: worker, arity, dual value

data Top
  = TopFun Name Name Int -- ^ dual value, worker, arity
  | TopVal Name          -- ^ a top-level constant: a computation

data Env = Env
  { eLocals :: M.Map Name Local
  , eTop :: M.Map Name Top
  , eTy :: TyEnv
  , eCons :: M.Map Name (Name, Int)  -- ^ block constructors: dual name, arity
  , eFields :: M.Map Name Name       -- ^ block record fields of dual types
  , eCtx :: Ctx
  , eInline :: M.Map Name Inlinable  -- ^ local functions inlined at their calls
  , eParts :: M.Map Name [Name]      -- ^ tuples inlining took apart, and into what
  , eSole :: [Name]                  -- ^ block constructors that are their type's only one
  }

-- | What inlining may use at this point.
look :: Env -> Look
look env = Look (`M.lookup` eInline env) (`M.lookup` eParts env)

addVars :: [Name] -> Env -> Env
addVars ns env = env { eLocals = foldr (`M.insert` LVar) (eLocals env) ns }

data VarInfo
  = VLocal
  | VLocalFun Name Int Name
  | VTopFun Name Name Int
  | VTopVal Name
  | VPrim Prim
  | VSel Name
  | VOutside Name Int  -- ^ polymorphic numeric code from outside any block

resolveVar :: Env -> Name -> Q VarInfo
resolveVar env v
  | Just l <- M.lookup v (eLocals env) = pure $ case l of
      LVar -> VLocal
      LFun w k d -> VLocalFun w k d
  | Just t <- M.lookup v (eTop env) = pure $ case t of
      TopFun d w k -> VTopFun d w k
      TopVal d -> VTopVal d
  | Just f <- M.lookup v (eFields env) = pure (VSel f)
  | Just p <- lookupPrim v = pure (VPrim p)
  | Just why <- refusedPrim v = unsupported (eCtx env) why ""
  | otherwise = do
      md <- externalDual dualValName v
      sel <- if md == Nothing then plainSelector env v else pure False
      case md of
        Nothing | sel -> pure (VSel v)
        Nothing -> outsideVar env v
        Just d -> do
          mw <- externalDual dualWorkerName v
          case mw of
            Just w -> do
              i <- reifyR w
              case i of
                VarI _ t _ -> pure (VTopFun d w (arrowArity t))
                _ -> pure (VTopFun d w 1)
            Nothing -> do
              i <- reifyR d
              pure $ case i of
                VarI _ (AppT (ConT m) _) _ | m == ''AD -> VTopVal d
                VarI _ (ForallT _ _ (AppT (ConT m) _)) _ | m == ''AD -> VTopVal d
                _ -> VSel d

-- | A function defined outside any block.  Discrete code (no Double, no
-- function arguments) is used as it is; polymorphic numeric code runs at
-- the dual scalar, recording through its 'Num'/'Floating' instances
-- ("Numeric.DualRev.Internal.Run.Scalar.Number"); a function at Double has no
-- derivative to record and is refused.
outsideVar :: Env -> Name -> Q VarInfo
outsideVar env v
  | Just m <- nameModule v, any (`isPrefixOf` m) transformerModules = refuse
      ("`" ++ nameBase v ++ "' of " ++ m ++ ": the monads of mtl and transformers (State, Reader, "
       ++ "Writer, RWS, their transformers) are not differentiable code (their binds are functions "
       ++ "of those libraries, which the front end cannot see into); do-notation works in Maybe, "
       ++ "Either e, lists and Identity: carry the state as an argument, or as the accumulator of a "
       ++ "fold (foldl, scanl, mapAccumL)")
  | otherwise = do
    info <- recover (pure Nothing) (Just <$> reifyR v)
    case info of
      Just (VarI _ ty _) -> classify ty
      Just (ClassOpI _ ty cls)
        -- a method of a standard class: the class has instances at the dual types
        | cls `elem` standardClasses -> classify ty
        | otherwise -> refuse
        ("the method `" ++ nameBase v ++ "' of the class `" ++ pprint cls ++ "', which is declared "
         ++ "outside any differentiable block; declare the class (and its instances) in a "
         ++ "differentiable block")
      _ -> refuse ("`" ++ pprint v ++ "', which is neither a supported Prelude function nor "
                   ++ "defined in a differentiable block")
  where
    transformerModules = ["Control.Monad.State", "Control.Monad.Reader", "Control.Monad.Writer",
                          "Control.Monad.RWS", "Control.Monad.Trans.", "Control.Monad.Except",
                          "Control.Monad.Cont"]
    refuse msg = unsupported (eCtx env) msg ""
    classify ty = do
      let (tvs, ctx, body) = quantified ty
          (args, res) = arrows body
          k = length args
      if any hasArrow args
        then refuse ("`" ++ pprint v ++ "', defined outside any differentiable block, which takes "
                     ++ "a function as an argument; define it in a differentiable block")
        else if not (null ctx) then pure (VOutside v k)
        else do
          nd <- or <$> mapM (needsDual (eTy env)) (res : args)
          if not nd || not (null tvs) then pure (VPrim (PPure v k))
            else refuse ("`" ++ pprint v ++ "', defined outside any differentiable block at the type "
                         ++ pprint ty ++ "; move it into a differentiable block, give it a "
                         ++ "polymorphic signature such as `Floating a => a -> a', or declare it a "
                         ++ "primitive with its derivative (primitive '" ++ nameBase v ++ " '"
                         ++ nameBase v ++ "VJP) (if a block or a rule of another module gives "
                         ++ "it its derivative, that module must export its dual `"
                         ++ nameBase (dualValName v) ++ "' too, and `" ++ nameBase (dualWorkerName v)
                         ++ "')")
    quantified (ForallT tvs ctx t) = let (tvs', ctx', t') = quantified t in (tvs ++ tvs', ctx ++ ctx', t')
    quantified t = ([], [], t)
    arrows (AppT (AppT ArrowT a) b) = let (as, r) = arrows b in (a : as, r)
    arrows (AppT (AppT (AppT MulArrowT _) a) b) = let (as, r) = arrows b in (a : as, r)
    arrows t = ([], t)
    hasArrow t = case t of
      ArrowT -> True
      MulArrowT -> True
      AppT a b -> hasArrow a || hasArrow b
      ForallT _ _ b -> hasArrow b
      SigT a _ -> hasArrow a
      ParensT a -> hasArrow a
      _ -> False

-- | Classes of the Prelude that have instances at the dual scalar (and that
-- a block may instantiate for its own types).
standardClasses :: [Name]
standardClasses = [ ''Num, ''Fractional, ''Floating, ''Real, ''RealFrac, ''RealFloat, ''Integral
                  , ''Enum, ''Eq, ''Ord, ''Show, ''Semigroup, ''Monoid ]

-- | A record selector of a type reused as is (one without a dual twin,
-- such as @data V a = V { vx :: a }@), declared elsewhere.
plainSelector :: Env -> Name -> Q Bool
plainSelector env v = recover (pure False) $ do
  VarI _ t _ <- reifyR v
  let strip (ForallT _ _ x) = strip x
      strip x = x
      tyHead (AppT f _) = tyHead f
      tyHead x = x
  case strip t of
    AppT (AppT ArrowT arg) _ | ConT tn <- tyHead arg -> do
      TyConI d <- reifyTypeR tn
      let cons = case d of
            DataD _ _ _ _ cs _ -> cs
            NewtypeD _ _ _ _ c _ -> [c]
            _ -> []
      if v `elem` [f | RecC _ fs <- cons, (f, _, _) <- fs]
        then not <$> needsDual (eTy env) (ConT tn)
        else pure False
    _ -> pure False

-- | A constructor's name in transformed code and its arity.
conInfo :: Env -> Name -> Q (Name, Int)
conInfo env c
  | Just x <- M.lookup c (eCons env) = pure x
  | otherwise = do
      k <- conArity c
      i <- reifyR c
      parentNeeds <- case i of
        DataConI _ _ parent -> needsDual (eTy env) (ConT parent)
        _ -> pure False
      if not parentNeeds then pure (c, k) else do
        md <- externalDual dualConName c
        case md of
          Just d -> pure (d, k)
          Nothing -> unsupported (eCtx env)
            ("the constructor `" ++ pprint c ++ "', whose type holds Double values but was "
             ++ "not declared in a differentiable block") ""

fieldName :: Env -> Bool -> Name -> Q Name
fieldName env dual f
  | Just f' <- M.lookup f (eFields env) = pure f'
  | not dual = pure f
  | otherwise = maybe f id <$> externalDual dualValName f

------------------------------------------------------------------------------
-- Results: a pure value or a computation

data Res = Pure Exp | Mon Exp

monE :: Res -> Exp
monE (Pure e) = AppE (VarE 'pure) e
monE (Mon m) = m

atomic :: Exp -> Bool
atomic e = case e of
  VarE _ -> True
  ConE _ -> True
  LitE _ -> True
  _ -> False

bindE :: Exp -> Name -> Exp -> Exp
bindE m v body = InfixE (Just m) (VarE '(>>=)) (Just (LamE [VarP v] body))

letR :: Name -> Exp -> Res -> Res
letR v e r = case r of
  Pure x -> Pure (LetE [d] x)
  Mon x -> Mon (LetE [d] x)
  where d = ValD (VarP v) (NormalB e) []

-- | Run a result and continue with an atomic expression for its value.
bindR :: Res -> (Exp -> Q Res) -> Q Res
bindR (Pure e) k | atomic e = k e
bindR (Pure e) k = do
  v <- newName "p"
  letR v e <$> k (VarE v)
bindR (Mon m) k = do
  v <- newName "m"
  r <- k (VarE v)
  pure (Mon (bindE m v (monE r)))

bindAll :: [Res] -> ([Exp] -> Q Res) -> Q Res
bindAll [] k = k []
bindAll (r : rs) k = bindR r (\e -> bindAll rs (\es -> k (e : es)))

-- | Apply a function value (atomic) to arguments, one Kleisli step each.
applyVal :: Exp -> [Exp] -> Q Res
applyVal g [] = pure (Pure g)
applyVal g (a : as) = go (AppE g a) as
  where
    go m [] = pure (Mon m)
    go m (x : xs) = do
      h <- newName "h"
      go (bindE m h (AppE (VarE h) x)) xs

applyRes :: Res -> [Exp] -> Q Res
applyRes r [] = pure r
applyRes r as = bindR r (`applyVal` as)

-- | @\a1 -> pure (\a2 -> ... body [a1..ak])@: the dual value of something
-- taking k arguments, whose saturated form is @body@ (of type @AD r@).
curryLam :: Int -> ([Exp] -> Exp) -> Q Exp
curryLam k mk = do
  vs <- replicateM k (newName "a")
  let go [v] acc = LamE [VarP v] (mk (reverse (VarE v : acc)))
      go (v : rest) acc = LamE [VarP v] (AppE (VarE 'pure) (go rest (VarE v : acc)))
      go [] _ = mk []
  pure (go vs [])

pureApp :: Name -> [Exp] -> Exp
pureApp n es = AppE (VarE 'pure) (foldl AppE (VarE n) es)

errExp :: String -> Exp
errExp msg = AppE (VarE 'errorAD) (LitE (StringL msg))

------------------------------------------------------------------------------
-- Expressions

transE :: Env -> Expr -> Q Res
transE env ex = case ex of
  EVar v -> do
    vi <- resolveVar env v
    case vi of
      VLocal -> pure (Pure (VarE v))
      _ -> varValue vi
  ECon c -> do
    (c', k) <- conInfo env c
    if k == 0 then pure (Pure (ConE c'))
      else Pure <$> curryLam k (\es -> AppE (VarE 'pure) (foldl AppE (ConE c') es))
  ELit l -> pure (Pure (LitE l))
  EApp f args -> do
    -- helpers called among the arguments inlined first, so that an
    -- expression over their results is one statement with theirs
    within <- case f of
      EVar v | not (M.member v (eInline env)) -> inlineWithin (look env) ex
      _ -> pure Nothing
    maybe (transArith env ex f args) (transE env) within
  ELam ps body -> do
    ps' <- mapM (transPat env) ps
    body' <- transE (addVars (concatMap patVars ps) env) body
    let go [p] = LamE [p] (monE body')
        go (p : rest) = LamE [p] (AppE (VarE 'pure) (go rest))
        go [] = monE body'
    pure (Pure (go ps'))
  ELet [BVal (VarP x) Nothing (Plain rhs) []] body -> do
    -- a value used once, by an expression that is always evaluated: moved
    -- to its use when it is arithmetic, to be part of that statement
    moved <- inlineLet (look env) x rhs body
    case moved of
      Just e -> transE env e
      Nothing -> transBinds env [BVal (VarP x) Nothing (Plain rhs) []] (\env' -> transE env' body)
  ELet [b] body | Just (v, xs) <- destructures b ->
    transBinds env [b] (\env' -> transE env' { eParts = M.insert v xs (eParts env') } body)
  ELet bs body -> transBinds env bs (\env' -> transE env' body)
  EIf c t e -> do
    rc <- transE env c
    bindR rc $ \c' -> do
      t' <- transE env t
      e' <- transE env e
      pure $ case (t', e') of
        (Pure a, Pure b) -> Pure (CondE c' a b)
        _ -> Mon (CondE c' (monE t') (monE e'))
  EMultiIf gs -> Mon <$> transGuards env gs (errExp (failMsg env "multi-way if"))
  ECase s alts -> do
    rs <- transE env s
    bindR rs $ \s' -> Mon <$> transAlts env s' alts (errExp (failMsg env "case"))
  ETuple es -> evalArgs env es (pure . Pure . TupE . map Just)
  EList es -> evalArgs env es (pure . Pure . ListE)
  ESig e t -> do
    r <- transE env e
    if hasTyVars t then pure r else do
      t' <- transType (eTy env) t
      pure $ case r of
        Pure x -> Pure (SigE x t')
        Mon m -> Mon (SigE m (AppT (ConT ''AD) t'))
  EArith (From a) -> evalArgs env [a] $ \es -> pure (Mon (foldl AppE (VarE 'enumFromD) es))
  EArith (FromThen a b) -> evalArgs env [a, b] $ \es -> pure (Mon (foldl AppE (VarE 'enumFromThenD) es))
  EArith (FromTo a b) -> evalArgs env [a, b] $ \es -> pure (Mon (foldl AppE (VarE 'enumFromToD) es))
  EArith (FromThenTo a b c) ->
    evalArgs env [a, b, c] $ \es -> pure (Mon (foldl AppE (VarE 'enumFromThenToD) es))
  ERecCon c fs -> do
    (c', _) <- conInfo env c
    names <- mapM (fieldName env (c' /= c) . fst) fs
    evalArgs env (map snd fs) $ \es -> pure (Pure (RecConE c' (zip names es)))
  ERecUpd e fs -> do
    names <- mapM (fieldName env True . fst) fs
    evalArgs env (e : map snd fs) $ \(e' : es) -> pure (Pure (RecUpdE e' (zip names es)))

-- | An application: one statement when it is an arithmetic expression of
-- two or more operations, else the application.
transArith :: Env -> Expr -> Expr -> [Expr] -> Q Res
transArith env ex f args = do
  tree <- arithTree (arithOp env) ex
  -- (an upper bound: a local variable is one leaf however often it
  -- occurs; any other leaf may evaluate to a value of its own)
  let ls = leaves tree
      isLocal e = case e of
        EVar v -> M.member v (eLocals env)
        _ -> False
      distinct = length (nub [v | EVar v <- filter isLocal ls])
        + length (filter (not . isLocal) ls)
  if opCount tree >= 2 && distinct >= 1 && distinct <= stmtMaxLeaves
    then transStatement env tree
    else transApp env f args

-- | The operation a name is, where it is the standard class method (not
-- one of the user's, nor a local that shadows it).
arithOp :: Env -> Name -> Q (Maybe Op)
arithOp env v
  | M.member v (eLocals env) || M.member v (eTop env) = pure Nothing
  | otherwise = pure $ case lookupPrim v of
      Just (PMon p _) -> lookup p
        [('plusD, Add), ('minusD, Sub), ('timesD, Mul), ('divD, Div), ('negateD, Neg)]
      _ -> Nothing

-- | An arithmetic expression of two or more operations as one statement
-- ("Numeric.DualRev.Internal.Compile.Statement"): its leaves evaluated
-- first, left to right, then 'stmtAt' with the statement's code and the
-- same operations one by one for other types (and for second order).
transStatement :: Env -> Tree Expr -> Q Res
transStatement env tree = do
  rs <- mapM (transE env) (leaves tree)
  bindAll rs $ \atoms -> do
    let evaluated = fillLeaves tree atoms
    byOps <- newName "byOps"
    ops <- byOpsRes evaluated
    toD <- newName "toD"
    fromD <- newName "fromD"
    body <- statementBody evaluated toD fromD (VarE byOps)
    pure $ Mon $ LetE [ValD (VarP byOps) (NormalB (monE ops)) []] $
      AppE (AppE (VarE 'stmtAt) (LamE [VarP toD, VarP fromD] body)) (VarE byOps)
  where
    fillLeaves t as = snd (go t as)
      where
        go (TLeaf _) (a : rest) = (rest, TLeaf a)
        go (TLeaf _) [] = error "transStatement: fewer leaves than the tree's"
        go (TLit l) rest = (rest, TLit l)
        go (TOp o ts) rest =
          let step (r, acc) u = let (r', u') = go u r in (r', acc ++ [u'])
              (rest', ts') = foldl step (rest, []) ts
          in (rest', TOp o ts')
    byOpsRes t = case t of
      TLeaf a -> pure (Pure a)
      TLit l -> pure (Pure (LitE l))
      TOp o ts -> do
        as <- mapM byOpsRes ts
        bindAll as (pure . Mon . foldl AppE (VarE (opPrim o)))
    opPrim o = case o of
      Add -> 'plusD
      Sub -> 'minusD
      Mul -> 'timesD
      Div -> 'divD
      Neg -> 'negateD

failMsg :: Env -> String -> String
failMsg env what = "dualrev: non-exhaustive patterns in " ++ what ++ " in `"
  ++ ctxDef (eCtx env) ++ "' (differentiable block at " ++ ctxBlock (eCtx env) ++ ")"

hasTyVars :: Type -> Bool
hasTyVars t = case t of
  VarT _ -> True
  AppT a b -> hasTyVars a || hasTyVars b
  ForallT {} -> True
  SigT a _ -> hasTyVars a
  ParensT a -> hasTyVars a
  _ -> False

evalArgs :: Env -> [Expr] -> ([Exp] -> Q Res) -> Q Res
evalArgs env es k = do
  rs <- mapM (transE env) es
  bindAll rs k

varValue :: VarInfo -> Q Res
varValue vi = case vi of
  VLocal -> error "varValue: VLocal handled by caller"
  VLocalFun _ _ d -> pure (Pure (VarE d))
  VTopFun d _ _ -> pure (Pure (VarE d))
  VTopVal d -> pure (Mon (VarE d))
  VSel s -> Pure <$> curryLam 1 (pureApp s)
  VOutside f 0 -> pure (Mon (AppE (VarE 'outsideD) (VarE f)))
  VOutside f k -> Pure <$> curryLam k (AppE (VarE 'outsideD) . foldl AppE (VarE f))
  VPrim p -> case p of
    PMon n 1 -> pure (Pure (VarE n))
    PMon n k -> Pure <$> curryLam k (foldl AppE (VarE n))
    PPure n 0 -> pure (Pure (VarE n))
    PPure n k -> Pure <$> curryLam k (pureApp n)
    PAnd -> Pure <$> curryLam 2 (pureApp '(&&))
    POr -> Pure <$> curryLam 2 (pureApp '(||))
    PErr -> Pure <$> curryLam 1 (foldl AppE (VarE 'errorAD))
    PPar -> Pure <$> curryLam 2 (\es -> AppE (VarE 'pure) (TupE (map Just es)))

transApp :: Env -> Expr -> [Expr] -> Q Res
transApp env f args = case (f, args) of
  (EVar v, [EApp (EVar w) (EVar g : inner)]) -> do
    vi <- resolveVar env v
    wi <- resolveVar env w
    gi <- resolveVar env g
    -- prim (prim' prim'' args), prim' given all of its arguments
    case (vi, wi, gi) of
      (VPrim (PMon outer 1), VPrim (PMon inner' k), VPrim (PMon fn _))
        | k == 1 + length inner, Just p <- fusedPrimWith outer inner' fn ->
            evalArgs env inner (pure . Mon . foldl AppE (VarE p))
      _ -> transFused env f args
  _ -> transFused env f args

transFused :: Env -> Expr -> [Expr] -> Q Res
transFused env f args = case (f, args) of
  (EVar v, [EApp (EVar w) inner]) -> do
    vi <- resolveVar env v
    wi <- resolveVar env w
    -- prim (prim' args) with all of prim''s arguments: one fused loop
    case (vi, wi) of
      (VPrim (PMon outer 1), VPrim (PMon inner' k))
        | k == length inner, Just p <- fusedPrim outer inner' ->
            evalArgs env inner (pure . Mon . foldl AppE (VarE p))
      (VPrim (PPure outer 1), VPrim (PMon inner' 2))
        | length inner == 2, Just p <- selectPrim outer inner' ->
            evalArgs env inner (pure . Mon . foldl AppE (VarE p))
      _ -> transApp1 env f args
  _ -> transApp1 env f args

-- | The comparisons whose operands are computed for their values alone
-- ('unrecordedD'): their outcome is a Bool or an Ordering, no dual number.
comparisons :: [Name]
comparisons = ['(<), '(<=), '(>), '(>=), '(==), '(/=), 'compare]

unrecorded :: Res -> Res
unrecorded (Mon m) = Mon (AppE (VarE 'unrecordedD) m)
unrecorded r = r

-- | An application, one function at a time.
transApp1 :: Env -> Expr -> [Expr] -> Q Res
transApp1 env f args = case f of
  EVar v -> do
    vi <- resolveVar env v
    case vi of
      VLocalFun _ k _ | n == k, Just i <- M.lookup v (eInline env) -> do
        (binds, core) <- inlineCall (look env) i args
        transE env (foldr (\b x -> ELet [b] x) core binds)
      VLocalFun w k _ | n >= k -> known (VarE w) k
      VTopFun _ w k | n >= k -> known (VarE w) k
      VPrim (PMon p k) | n >= k -> known (VarE p) k
      VPrim (PPure p 2) | n == 2, p `elem` comparisons -> do
        -- the operands' operations unrecorded where no guard needs them
        rs <- mapM (fmap unrecorded . transE env) args
        bindAll rs (pure . Pure . foldl AppE (VarE p))
      VPrim (PPure p k) | n >= k -> evalArgs env args $ \es ->
        applyRes (Pure (foldl AppE (VarE p) (take k es))) (drop k es)
      VPrim PAnd | [a, b] <- args -> shortCircuit a b True
      VPrim POr | [a, b] <- args -> shortCircuit a b False
      VPrim PPar | [a, b] <- args -> do
        ra <- transE env a
        rb <- transE env b
        pure (Mon (AppE (AppE (VarE 'parPairD) (monE ra)) (monE rb)))
      VPrim PErr -> evalArgs env args $ \es -> pure (Mon (foldl AppE (VarE 'errorAD) (take 1 es)))
      VOutside g k | n >= k -> evalArgs env args $ \es ->
        applyRes (Mon (AppE (VarE 'outsideD) (foldl AppE (VarE g) (take k es)))) (drop k es)
      VLocal -> evalArgs env args (applyVal (VarE v))
      _ -> generic
  ECon c -> do
    (c', k) <- conInfo env c
    if n == k
      then evalArgs env args (pure . Pure . foldl AppE (ConE c'))
      else generic
  _ -> generic
  where
    n = length args
    known fn k = evalArgs env args $ \es -> applyRes (Mon (foldl AppE fn (take k es))) (drop k es)
    generic = do
      rf <- transE env f
      bindR rf $ \g -> evalArgs env args (applyVal g)
    -- a && b / a || b evaluate b only when needed
    shortCircuit a b isAnd = do
      ra <- transE env a
      bindR ra $ \a' -> do
        rb <- transE env b
        let other = Pure (ConE (if isAnd then 'False else 'True))
            (yes, no) = if isAnd then (rb, other) else (other, rb)
        pure $ case (yes, no) of
          (Pure y, Pure z) -> Pure (CondE a' y z)
          _ -> Mon (CondE a' (monE yes) (monE no))

------------------------------------------------------------------------------
-- Patterns

transPat :: Env -> Pat -> Q Pat
transPat env p = case p of
  ConP c _ | c == 'Constant -> unsupported (eCtx env)
    "matching on the Constant constructor (use `constant c' to get the value as a constant)" ""
  ConP c ps -> do
    (c', _) <- conInfo env c
    ConP c' <$> mapM (transPat env) ps
  InfixP a c b -> do
    (c', _) <- conInfo env c
    a' <- transPat env a
    b' <- transPat env b
    pure (if c' == c then InfixP a' c b' else ConP c' [a', b'])
  RecP c fs -> do
    (c', _) <- conInfo env c
    fs' <- forM fs $ \(f, q) -> (,) <$> fieldName env (c' /= c) f <*> transPat env q
    pure (RecP c' fs')
  TupP ps -> TupP <$> mapM (transPat env) ps
  ListP ps -> ListP <$> mapM (transPat env) ps
  ParensP q -> ParensP <$> transPat env q
  TildeP q -> TildeP <$> transPat env q
  BangP q -> BangP <$> transPat env q
  AsP v q -> AsP v <$> transPat env q
  SigP q t
    | hasTyVars t -> transPat env q
    | otherwise -> SigP <$> transPat env q <*> transType (eTy env) t
  _ -> pure p

------------------------------------------------------------------------------
-- Case alternatives, guards, where

canFall :: C.Body -> Bool
canFall (Plain _) = False
canFall (Guarded gs) = null gs || not (all trivial (fst (last gs)))

trivial :: C.Guard -> Bool
trivial (GBool (EVar v)) = v == 'otherwise
trivial (GBool (ECon c)) = c == 'True
trivial _ = False

-- | Match the atomic scrutinee against the alternatives; fall back to fb
-- (of type AD r) when none matches.
transAlts :: Env -> Exp -> [Alt] -> Exp -> Q Exp
transAlts env s alts fb
  | not (any (\(Alt _ b _) -> canFall b) alts) = do
      ms <- forM alts $ \(Alt p b ws) -> do
        p' <- transPat env p
        e <- transWhereBody (addVars (patVars p) env) ws b fb
        pure (Match p' (NormalB e) [])
      let total = any (\(Alt p _ _) -> irrefutable p) alts
      pure (CaseE s (ms ++ [Match WildP (NormalB fb) [] | not total]))
  | otherwise = go alts
  where
    go [] = pure fb
    go (Alt p b ws : rest) = do
      restE <- go rest
      k <- newName "_next"
      p' <- transPat env p
      e <- transWhereBody (addVars (patVars p) env) ws b (VarE k)
      let ms = Match p' (NormalB e) [] : [Match WildP (NormalB (VarE k)) [] | not (irrefutable p)]
      pure (LetE [ValD (VarP k) (NormalB restE) []] (CaseE s ms))

transWhereBody :: Env -> [Bind] -> C.Body -> Exp -> Q Exp
transWhereBody env ws b fb = monE <$> transBinds env ws (\env' -> Mon <$> transBody env' b fb)

transBody :: Env -> C.Body -> Exp -> Q Exp
transBody env (Plain e) _ = monE <$> transE env e
transBody env (Guarded gs) fb = transGuards env gs fb

transGuards :: Env -> [([C.Guard], Expr)] -> Exp -> Q Exp
transGuards _ [] fb = pure fb
transGuards env ((gs, e) : rest) fb
  | all trivial gs = guardChain env gs e fb
  | null rest = guardChain env gs e fb
  | otherwise = do
      next <- transGuards env rest fb
      k <- newName "_alt"
      inner <- guardChain env gs e (VarE k)
      pure (LetE [ValD (VarP k) (NormalB next) []] inner)

guardChain :: Env -> [C.Guard] -> Expr -> Exp -> Q Exp
guardChain env [] e _ = monE <$> transE env e
guardChain env (g : gs) e k = case g of
  _ | trivial g -> guardChain env gs e k
  GBool c -> do
    rc <- transE env c
    fmap monE $ bindR rc $ \c' -> do
      yes <- guardChain env gs e k
      pure (Mon (CondE c' yes k))
  GBind p x -> do
    rx <- transE env x
    fmap monE $ bindR rx $ \x' -> do
      p' <- transPat env p
      body <- guardChain (addVars (patVars p) env) gs e k
      pure (Mon (CaseE x' (Match p' (NormalB body) [] : [Match WildP (NormalB k) [] | not (irrefutable p)])))
  GLet bs -> fmap monE $ transBinds env bs (\env' -> Mon <$> guardChain env' gs e k)

------------------------------------------------------------------------------
-- Bindings

-- | Local bindings in dependency order: values are computed in order (strict),
-- groups of (mutually) recursive functions become one Haskell let.
transBinds :: Env -> [Bind] -> (Env -> Q Res) -> Q Res
transBinds env [] k = k env
transBinds env binds k = go env sccs
  where
    indexed = zip [0 :: Int ..] binds
    owner = M.fromList [(n, i) | (i, b) <- indexed, n <- bindNames b]
    deps b = nub (mapMaybe (`M.lookup` owner) (bindVars b))
    sccs = stronglyConnComp [(b, i, deps b) | (i, b) <- indexed]
    go e [] = k e
    go e (AcyclicSCC b@(BVal {}) : rest) = valueBind e b (\e' -> go e' rest)
    go e (AcyclicSCC b : rest) = funGroup e [b] (\e' -> go e' rest)
    go e (CyclicSCC bs : rest)
      | all isFun bs = funGroup e bs (\e' -> go e' rest)
      | otherwise = unsupported (eCtx env)
          ("recursive value bindings (knot-tying) of "
           ++ unwords [nameBase n | b <- bs, n <- bindNames b]
           ++ "; differentiable code is evaluated strictly") ""
    isFun (BFun {}) = True
    isFun _ = False

valueBind :: Env -> Bind -> (Env -> Q Res) -> Q Res
valueBind env (BVal p _ body ws) k = do
  r <- case (body, ws) of
    (Plain e, []) -> transE env e
    _ -> Mon <$> transWhereBody env ws body (errExp (failMsg env "a guarded binding"))
  let env' = addVars (patVars p) env
  case p of
    VarP v -> named v r env'
    BangP (VarP v) -> named v r env'
    _ -> bindR r $ \x -> do
      p' <- transPat env p
      rest <- k env'
      pure (Mon (CaseE x [Match p' (NormalB (monE rest)) []]))
  where
    named v (Pure e) env' = letR v e <$> k env'
    named v (Mon m) env' = do
      rest <- k env'
      pure (Mon (bindE m v (monE rest)))
valueBind env (BFun {}) k = k env

funGroup :: Env -> [Bind] -> (Env -> Q Res) -> Q Res
funGroup env bs k = do
  infos <- forM bs $ \(BFun n _ cs) -> do
    w <- newName ("_" ++ safeBase n ++ "W")
    d <- newName ("_" ++ safeBase n ++ "V")
    pure (n, w, d, clauseArity cs)
  -- (a function with a signature stays a call: its argument and result
  -- types may be what fixes the types at the call)
  inlined <- M.fromList . concat <$> sequence
    [ maybe [] (\i -> [(n, i)]) <$> inlinable (soleCon env) n cs | [BFun n Nothing cs] <- [bs] ]
  let env' = env { eLocals = foldr (\(n, w, d, a) -> M.insert n (LFun w a d)) (eLocals env) infos
                 , eInline = M.union inlined (eInline env) }
  decs <- fmap concat $ forM (zip bs infos) $ \(BFun _ msig cs, (_, w, d, a)) -> do
    (ps, body) <- funBody env' a cs
    sigs <- case msig of
      Just t -> do  -- type variables of a local signature are its own (Haskell98) or scoped consistently
        wt <- workerType (eTy env) a t
        vt <- transType (eTy env) t
        pure [SigD w wt, SigD d vt]
      _ -> pure []
    wrapper <- wrapperDec d w a
    pure (sigs ++ [FunD w [Clause ps (NormalB body) []], wrapper])
  r <- k env'
  pure $ case r of
    Pure e -> Pure (LetE decs e)
    Mon m -> Mon (LetE decs m)

-- | Whether a constructor is the only one of its type (so that its pattern
-- always matches): the block's types, or what GHC knows of others.
soleCon :: Env -> Name -> Q Bool
soleCon env c
  | c `elem` eSole env = pure True
  | otherwise = recover (pure False) $ do
      i <- reifyR c
      case i of
        DataConI _ _ parent -> do
          t <- reifyR parent
          pure $ case t of
            TyConI (DataD _ _ _ _ [_] _) -> True
            TyConI (NewtypeD {}) -> True
            _ -> False
        _ -> pure False

-- | A name's base usable inside an identifier (operators become "op").
safeBase :: Name -> String
safeBase n = let b = nameBase n in if all (\c -> isAlphaNum c || c `elem` "_'") b then b else "op"

clauseArity :: [C.Clause] -> Int
clauseArity (C.Clause ps _ _ : _) = length ps
clauseArity [] = 0

-- | The dual value of a function with the given worker: a function binding
-- (not a pattern binding, so the monomorphism restriction stays out).
wrapperDec :: Name -> Name -> Int -> Q Dec
wrapperDec d w 1 = do
  a <- newName "a"
  pure (FunD d [Clause [VarP a] (NormalB (AppE (VarE w) (VarE a))) []])
wrapperDec d w k = do
  a <- newName "a"
  rest <- curryLam (k - 1) (\es -> foldl AppE (VarE w) (VarE a : es))
  pure (FunD d [Clause [VarP a] (NormalB (AppE (VarE 'pure) rest)) []])

-- | Worker parameters and body for a function's equations.
funBody :: Env -> Int -> [C.Clause] -> Q ([Pat], Exp)
funBody env _ [C.Clause ps b ws] | not (canFall b) = do
  ps' <- mapM (fmap strictVar . transPat env) ps
  e <- transWhereBody (addVars (concatMap patVars ps) env) ws b (errExp (failMsg env "a function"))
  pure (ps', e)
funBody env k cs = do
  as <- replicateM k (newName "arg")
  let scrut = case as of
        [a] -> VarE a
        _ -> TupE (map (Just . VarE) as)
      alts = [Alt (case ps of { [q] -> q; _ -> TupP ps }) b ws | C.Clause ps b ws <- cs]
  e <- transAlts env scrut alts (errExp (failMsg env "a function"))
  pure (map (strictVar . VarP) as, e)

-- | A variable parameter of a worker taken strictly.  Differentiable code
-- is call-by-value, so the argument is a value already; saying so lets GHC
-- pass the fields of a tuple or record argument in registers (a loop whose
-- state is a tuple allocated it again at every step).
strictVar :: Pat -> Pat
strictVar (VarP v) = BangP (VarP v)
strictVar q = q

-- | The worker's type: the first k argument types transformed, then @AD r'@.
workerType :: TyEnv -> Int -> Type -> Q Type
workerType tenv k ty = case ty of
  ForallT tvs ctx t -> ForallT tvs <$> (concat <$> mapM (transPred tenv) ctx) <*> workerType tenv k t
  _ -> peel k ty
  where
    peel 0 r = AppT (ConT ''AD) <$> transType tenv r
    peel j (AppT (AppT ArrowT a) b) = do
      a' <- transType tenv a
      b' <- peel (j - 1) b
      pure (AppT (AppT ArrowT a') b')
    peel _ _ = fail ("dualrev: a type signature has fewer arguments than its equations: " ++ pprint ty)

------------------------------------------------------------------------------
-- The block

-- | Keep the declarations and add their duals.
differentiableDecs :: Q [Dec] -> Q [Dec]
differentiableDecs qds = do
  ds <- qds
  loc <- location
  let ctx0 = Ctx (showLoc loc) "<block>"
  outside <- outsideTypes ds
  tenv <- blockDualTypes (ds ++ outside)
  outsideDecs <- outsideInstances ctx0 ds outside
  -- the block's own declarations and the outside ones it makes twins of
  let tyDecs = ds ++ outside
  let sigs = M.fromList [(n, t) | SigD n t <- ds]
  binds <- fmap concat $ forM ds $ \d -> case d of
    FunD n cs -> do
      let ctx = ctx0 { ctxDef = nameBase n }
      cs' <- parseClauses ctx n cs
      pure [BFun n (M.lookup n sigs) cs']
    ValD (VarP n) b ws -> do
      let ctx = ctx0 { ctxDef = nameBase n }
      C.Clause _ b' ws' : _ <- parseClauses ctx n [Clause [] b ws]
      pure [BVal (VarP n) (M.lookup n sigs) b' ws']
    ValD p _ _ -> unsupported ctx0 "a top-level pattern binding" (pprint p)
    SigD _ _ -> pure []
    ClassD {} -> pure []
    InstanceD {} -> pure []
    DataD {} -> pure []
    NewtypeD {} -> pure []
    TySynD {} -> pure []
    PragmaD _ -> pure []
    InfixD _ _ -> pure []
    _ -> unsupported ctx0 "this declaration" (takeWhile (/= '\n') (pprint d))
  constantsOfTwins ctx0 tenv ds
  forM_' binds $ \b -> case b of
    BFun n Nothing _ -> unsupported ctx0 { ctxDef = nameBase n } "a top-level definition without a type signature" ""
    BVal (VarP n) Nothing _ _ -> unsupported ctx0 { ctxDef = nameBase n } "a top-level definition without a type signature" ""
    _ -> pure ()
  let methods = concat [classMethods d | d@ClassD {} <- ds]
      tops = M.fromList $ [(m, methodTop m k) | (m, _, k) <- methods] ++ flip map binds (\b -> case b of
        BFun n _ cs -> (n, TopFun (dualValName n) (dualWorkerName n) (clauseArity cs))
        BVal (VarP n) _ _ _ -> (n, TopVal (dualValName n))
        BVal _ _ _ _ -> error "unreachable")
      dualTys = tyDuals tenv
      conList = concat [ [(c, k) | (c, k) <- consOf d] | d <- tyDecs ]
      consOf d = case d of
        DataD _ _ _ _ cs _ -> concatMap conNA cs
        NewtypeD _ _ _ _ con _ -> conNA con
        _ -> []
      conNA c = case c of
        NormalC cn fs -> [(cn, length fs)]
        RecC cn fs -> [(cn, length fs)]
        InfixC _ cn _ -> [(cn, 2)]
        _ -> []
      parentOf = M.fromList [ (c, tn) | d <- tyDecs, (tn, cs) <- tyCons d, c <- cs ]
      tyCons d = case d of
        DataD _ tn _ _ cs _ -> [(tn, map fst (concatMap conNA cs))]
        NewtypeD _ tn _ _ con _ -> [(tn, map fst (conNA con))]
        _ -> []
      isDualCon c = maybe False (`M.member` dualTys) (M.lookup c parentOf)
      cons = M.fromList [ (c, (if isDualCon c then dualConName c else c, k)) | (c, k) <- conList ]
      -- selectors of types with a dual twin become the twin's; those of
      -- types reused as is (data V a = V { vx :: a }) stay themselves
      fields = M.fromList [ (f, if M.member tn dualTys then dualValName f else f)
                          | d <- tyDecs, (tn, fs) <- recFields d, f <- fs ]
      recFields d = case d of
        DataD _ tn _ _ cs _ -> [(tn, [f | RecC _ fs <- cs, (f, _, _) <- fs])]
        NewtypeD _ tn _ _ (RecC _ fs) _ -> [(tn, [f | (f, _, _) <- fs])]
        _ -> []
      sole = [c | d <- tyDecs, (_, [c]) <- tyCons d]
      env0 = Env M.empty tops tenv cons fields ctx0 M.empty M.empty sole
  dataDecs <- concat <$> mapM (dualDataDec tenv) tyDecs
  travDecs <- concat <$> mapM (functorDecs tenv) ds
  forceDecs <- concat <$> mapM (forceDec tenv) ds
  dualDecs <- concat <$> mapM (transTop env0) binds
  classDecs <- concat <$> mapM (transClass env0) [d | d@ClassD {} <- ds]
  let arities = M.fromList [(m, k) | (m, _, k) <- methods]
  instDecs <- concat <$> mapM (transInstance env0 arities) [d | d@InstanceD {} <- ds]
  let out = ds ++ dataDecs ++ travDecs ++ forceDecs ++ dualDecs ++ classDecs ++ instDecs ++ outsideDecs
  register out
  -- a function that takes derivatives of code it is given (derivative,
  -- gradient, ...), itself or through a block function it calls or
  -- passes on, stays callable as a plain function: by its dual
  let takers = derivativeTakers ds
      takes d = any (`S.member` takers) (definedNames d)
  plains <- forM ds $ \d -> case d of
    FunD n _ | takes d, Just sig <- M.lookup n sigs, monomorphic sig -> do
      me <- plainViaDual sig (VarE (dualValName n))
      pure (maybe d (\e -> FunD n [Clause [] (NormalB e) []]) me)
    ValD (VarP n) _ _ | takes d, Just sig <- M.lookup n sigs, monomorphic sig -> do
      -- a definition without arguments: its dual is a computation that
      -- gives the dual function
      x <- newName "x"
      g <- newName "g"
      let dv = LamE [VarP x] (InfixE (Just (VarE (dualValName n))) (VarE '(>>=))
                                     (Just (LamE [VarP g] (AppE (VarE g) (VarE x)))))
      me <- plainViaDual sig dv
      pure (maybe d (\e -> ValD (VarP n) (NormalB e) []) me)
    _ -> pure d
  pure (plains ++ drop (length ds) out)
  where
    forM_' xs f = mapM_ f xs

-- | Differentiable code computes with a type's dual twin, which gets an
-- instance of a standard class only where the type's instance is declared
-- in a block (its equations are transformed there).  An instance declared
-- outside every block cannot be read from here.  Where the block mentions
-- such a type, warn at compile time, saying where the instance belongs; and
-- give the twin an instance of Num, Fractional and Floating whose methods
-- fail with the same words, so that code which does compute with it stops
-- there rather than at GHC's "No instance for (Num C'dr)", which would
-- hide the warning.  Not an error: a block may mention the type, match on
-- it and compute with its fields, without its arithmetic.
outsideInstances :: Ctx -> [Dec] -> [Dec] -> Q [Dec]
outsideInstances ctx ds outside = do
  let inBlock = [(cls, t) | InstanceD _ _ hd _ <- ds, (ConT cls, ConT t : _) <- [typeSpine hd]]
      twinnedHere = [n | Just n <- map declName outside]
  -- the types the block mentions, and the parents of the constructors it
  -- uses
  refs <- forM (S.toList (typeRefs ds)) $ \n -> do
    i <- recover (pure Nothing) (Just <$> reifyR n)
    pure $ case i of
      Just (DataConI _ _ parent) -> parent
      _ -> n
  fmap concat $ forM (nub refs) $ \t -> do
    twin <- if t `elem` twinnedHere then pure (Just (dualTyName t)) else externalDual dualTyName t
    info <- recover (pure Nothing) (Just <$> reifyTypeR t)
    case (twin, info) of
      (Just t', Just (TyConI d)) | Just tvs <- tyVarsOf d -> do
        vs <- mapM (const (newName "a")) tvs
        let at n = foldl AppT (ConT n) (map VarT vs)
            has cls n = not . null <$> recover (pure []) (reifyInstances cls [at n])
        missing <- fmap concat $ forM arithmeticClasses $ \cls -> do
          mine <- has cls t
          theirs <- if t `elem` twinnedHere then pure False else has cls t'
          pure [cls | mine, not theirs, (cls, t) `notElem` inBlock]
        let declared = t `notElem` twinnedHere
        forM_' missing $ \cls -> reportWarning (message declared cls t ++ "\n  in the differentiable block at " ++ ctxBlock ctx)
        forM [cls | cls <- missing, cls `elem` [''Num, ''Fractional, ''Floating]] $ \cls -> do
          ClassI (ClassD _ _ _ _ sigs) _ <- reify cls
          let methods = [m | SigD m _ <- sigs]
              body = AppE (VarE 'outsideInstanceError) (LitE (StringL (message declared cls t)))
          pure (InstanceD Nothing [] (AppT (ConT cls) (at t')) [ValD (VarP m) (NormalB body) [] | m <- methods])
      _ -> pure []
  where
    forM_' xs f = mapM_ f xs
    -- (declared: the type itself is declared in a block)
    message declared cls t =
      "dualrev: the instance `" ++ nameBase cls ++ " " ++ nameBase t
      ++ "' is declared outside any differentiable block, so differentiable code cannot compute with it"
      ++ "; move the instance into a differentiable block"
      ++ (if declared then ": the one that declares `" ++ nameBase t ++ "', or a block of its own before this one"
                      else " of its own, before this one")
      ++ " (differentiable [d| instance " ++ nameBase cls ++ " " ++ nameBase t ++ " where ... |])"
    tyVarsOf d = case d of
      DataD _ _ tvs _ _ _ -> Just tvs
      NewtypeD _ _ tvs _ _ _ -> Just tvs
      _ -> Nothing
    arithmeticClasses = [''Num, ''Fractional, ''Floating, ''Real, ''RealFrac, ''RealFloat]

-- | A 'Constant' moves its value onto the tape through an instance that
-- pairs the plain type with its dual (a class of two parameters); one for a
-- data type's twin would need MultiParamTypeClasses in the user's module,
-- which a splice cannot switch on.  So a constant of such a type is refused
-- here, by name, with what to write instead.
constantsOfTwins :: Ctx -> TyEnv -> [Dec] -> Q ()
constantsOfTwins ctx tenv ds = mapM_ check [(n, t) | SigD n t <- ds]
  where
    check (n, t) = case [c | c <- constantsIn t, any (`M.member` tyDuals tenv) (S.toList (typeRefs [SigD n c]))] of
      c : _ -> unsupported ctx { ctxDef = nameBase n }
        ("`Constant " ++ shortType c ++ "', a constant of a data type holding Double values "
         ++ "(a Constant holds Doubles, Ints, Bools, Vec, Mat, and lists and tuples of them); "
         ++ "pass its contents as a tuple or a list and rebuild the value inside the block, "
         ++ "or make it an argument of its own (its derivative is then computed, and may be ignored)") ""
      [] -> pure ()
    -- a type as written in the block (unqualified names, in parentheses
    -- where applied)
    shortType ty = case ty of
      ConT c -> nameBase c
      AppT ListT x -> "[" ++ pprint' x ++ "]"
      _ -> "(" ++ pprint' ty ++ ")"
    pprint' ty = case typeSpine ty of
      (TupleT _, xs) -> "(" ++ intercalate ", " (map pprint' xs) ++ ")"
      (ListT, [x]) -> "[" ++ pprint' x ++ "]"
      (ConT c, []) -> nameBase c
      (ConT c, xs) -> unwords (nameBase c : map shortType xs)
      _ -> pprint ty
    constantsIn :: Type -> [Type]
    constantsIn ty = case ty of
      AppT (ConT c) x | c == ''Constant -> [x]
      AppT a b -> constantsIn a ++ constantsIn b
      ForallT _ _ x -> constantsIn x
      SigT x _ -> constantsIn x
      ParensT x -> constantsIn x
      _ -> []

-- | The block's definitions whose plain versions cannot run: those that
-- call one of the functions that differentiate the code they are given,
-- and, to a fixed point, those that name one of them (call it, or pass it
-- on as an argument).
derivativeTakers :: [Dec] -> S.Set Name
derivativeTakers ds = grow (S.fromList [n | d <- ds, any (`elem` differentiators) (uses d), n <- definedNames d])
  where
    differentiators = [ 'N.derivative, 'N.derivative', 'N.gradient, 'N.gradient', 'N.jacobianOf, 'N.hessianOf ]
    uses d = S.toList (S.fromList (varsOf d))
    defs = [(definedNames d, uses d) | d <- ds]
    grow known =
      let known' = S.union known (S.fromList [n | (ns, us) <- defs, any (`S.member` known) us, n <- ns])
      in if S.size known' == S.size known then known else grow known'
    varsOf :: Data x => x -> [Name]
    varsOf x = [n | Just (VarE n) <- [cast x]] ++ concat (gmapQ varsOf x)

-- | The names a top-level declaration defines (a function or a variable).
definedNames :: Dec -> [Name]
definedNames d = case d of
  FunD n _ -> [n]
  ValD (VarP n) _ _ -> [n]
  _ -> []

-- | Whether a signature has no type variables (a polymorphic function's
-- plain definition stays as written: its dual runs at Double only).
monomorphic :: Type -> Bool
monomorphic t = case t of
  ForallT {} -> False
  VarT _ -> False
  AppT a b -> monomorphic a && monomorphic b
  SigT a _ -> monomorphic a
  ParensT a -> monomorphic a
  _ -> True

transTop :: Env -> Bind -> Q [Dec]
transTop env0 b = case b of
  BFun n (Just sig) cs -> do
    let env = env0 { eCtx = (eCtx env0) { ctxDef = nameBase n } }
        k = clauseArity cs
        w = dualWorkerName n
        d = dualValName n
    (ps, body) <- funBody env k cs
    wt <- workerType (eTy env) k sig
    vt <- transType (eTy env) sig
    wrapper <- wrapperDec d w k
    -- an overloaded worker keeps its unfolding, so that GHC specialises it
    -- where it is used at a known type (Double, a user vector type),
    -- dictionaries gone: as fast as a monomorphic definition
    let overloaded = case sig of { ForallT _ (_ : _) _ -> True; _ -> False }
    pure ([ SigD w wt, FunD w [Clause ps (NormalB body) []]
          , SigD d vt, wrapper, PragmaD (InlineP d Inline FunLike AllPhases) ]
          ++ [PragmaD (InlineP w Inlinable FunLike AllPhases) | overloaded]
          ++ markUsed d vt)
  BVal (VarP n) (Just sig) body ws -> do
    let env = env0 { eCtx = (eCtx env0) { ctxDef = nameBase n } }
        d = dualValName n
    e <- transWhereBody env ws body (errExp (failMsg env "a guarded definition"))
    t <- transType (eTy env) sig
    -- a polymorphic constant: forall a. C a => AD t (not AD (forall a. ...))
    let vt = case t of
          ForallT tvs c r -> ForallT tvs c (AppT (ConT ''AD) r)
          _ -> AppT (ConT ''AD) t
    pure ([SigD d vt, ValD (VarP d) (NormalB e) []] ++ markUsed d vt)
  _ -> pure []

-- | @_use'f'dr = f'dr@: calls inside the module go to the worker, so the
-- dual value of a function that is not exported (or used unsaturated) would
-- draw GHC's unused-binding warning on the user's splice; a binding whose
-- name starts with an underscore uses it and is itself never reported.
-- (Named after the dual value, whose name is an identifier even for an
-- operator.)
markUsed :: Name -> Type -> [Dec]
markUsed d t =
  let u = mkName ("_use'" ++ nameBase d)
  in [SigD u t, ValD (VarP u) (NormalB (VarE d)) []]


------------------------------------------------------------------------------
-- Classes and instances

-- | A class of the block has a dual class over the dual types, whose
-- methods are the workers of the class's methods (defaults included); the
-- dual value of each method is an ordinary function outside the class.
-- Methods: name, signature, arity.
classMethods :: Dec -> [(Name, Type, Int)]
classMethods (ClassD _ _ _ _ body) = [(m, t, arrowArity t) | SigD m t <- body]
classMethods _ = []

methodTop :: Name -> Int -> Top
methodTop m 0 = TopVal (dualValName m)
methodTop m k = TopFun (dualValName m) (dualWorkerName m) k

transClass :: Env -> Dec -> Q [Dec]
transClass env0 d@(ClassD ctx n tvs fds body) = do
  let env = env0 { eCtx = (eCtx env0) { ctxDef = nameBase n } }
      tenv = eTy env
      n' = dualTyName n
      self = foldl AppT (ConT n') [VarT (tvName' tv) | tv <- tvs]
  ctx' <- concat <$> mapM (transPred tenv) ctx
  sigs <- forM (classMethods d) $ \(m, t, k) -> SigD (dualWorkerName m) <$> workerType tenv k t
  defaults <- methodBinds env (filter (not . isSig) body)
  defs <- forM defaults $ \(m, cs) -> do
    let k = maybe 0 (\(_, _, a) -> a) (lookupMethod m)
    (ps, e) <- methodWorker env k cs
    pure (FunD (dualWorkerName m) [Clause ps (NormalB e) []])
  vals <- fmap concat $ forM (classMethods d) $ \(m, t, k) -> do
    vt <- transType tenv t
    let dv = dualValName m
        quant x = ForallT [PlainTV (tvName' tv) SpecifiedSpec | tv <- tvs] [self] x
    if k == 0
      then pure [ SigD dv (quant (AppT (ConT ''AD) vt))
                , ValD (VarP dv) (NormalB (VarE (dualWorkerName m))) [] ]
      else do
        wrapper <- wrapperDec dv (dualWorkerName m) k
        pure [SigD dv (quant vt), wrapper]
  pure (ClassD ctx' n' tvs fds (sigs ++ defs) : vals)
  where
    isSig x = case x of { SigD {} -> True; _ -> False }
    lookupMethod m = case [x | x@(m', _, _) <- classMethods d, m' == m] of
      (x : _) -> Just x
      [] -> Nothing
transClass _ _ = pure []

tvName' :: TyVarBndr flag -> Name
tvName' (PlainTV v _) = v
tvName' (KindedTV v _ _) = v

-- | An instance of a class with a dual class (declared in a block) becomes
-- an instance of the dual class at the dual type.  An instance of any other
-- class (Num, Floating, Ord, Show, ...) at a type with a dual twin is
-- declared again at the twin, each method running its transformed
-- equations on the calling thread's tape ("Numeric.DualRev.Internal.Run.Driver.Current");
-- at a type without a twin the instance itself serves.
transInstance :: Env -> M.Map Name Int -> Dec -> Q [Dec]
transInstance env0 arities (InstanceD ov ctx hd body) = case typeSpine hd of
  (ConT cls, tys) -> do
    let env = env0 { eCtx = (eCtx env0) { ctxDef = "instance " ++ pprint hd } }
        tenv = eTy env
    ctx' <- concat <$> mapM (transPred tenv) ctx
    tys' <- mapM (transType tenv) tys
    dual <- case M.lookup cls (tyClasses tenv) of
      Just c -> pure (Just c)
      Nothing -> externalDual dualTyName cls
    binds <- methodBinds env body
    case dual of
      Just cls' -> do
        decs <- forM binds $ \(m, cs) -> do
          k <- methodArity m
          (ps, e) <- methodWorker env k cs
          pure (FunD (dualWorkerName m) [Clause ps (NormalB e) []])
        pure [InstanceD ov ctx' (foldl AppT (ConT cls') tys') decs]
      Nothing
        | tys' == tys -> pure []
        | cls `notElem` standardClasses -> unsupported (eCtx env)
            ("an instance of the class `" ++ pprint cls ++ "', which is declared outside any "
             ++ "differentiable block, for a type holding Double values; declare the class in a "
             ++ "differentiable block") ""
        | otherwise -> do
            decs <- forM binds $ \(m, cs) -> do
              k <- methodArity m
              (ps, e) <- methodWorker env k cs
              as <- replicateM k (newName "a")
              w <- newName ("_" ++ safeBase m ++ "W")
              let call = foldl AppE (VarE w) (map VarE as)
                  worker = FunD w [Clause ps (NormalB e) []]
              pure (FunD m [Clause (map VarP as) (NormalB (AppE (VarE 'onTape) (LetE [worker] call))) []])
            pure [InstanceD ov ctx' (foldl AppT (ConT cls) tys') decs]
  _ -> unsupported (eCtx env0) "this instance head" (pprint hd)
  where
    methodArity m = case M.lookup m arities of
      Just k -> pure k
      Nothing -> do
        i <- recover (pure Nothing) (Just <$> reifyR m)
        case i of
          Just (ClassOpI _ t _) -> pure (arrowArity t)
          Just (VarI _ t _) -> pure (arrowArity t)
          _ -> unsupported (eCtx env0) ("`" ++ nameBase m ++ "', which is not a method of the class") ""
transInstance _ _ _ = pure []

-- | The equations of each method a class or instance body defines.
methodBinds :: Env -> [Dec] -> Q [(Name, [C.Clause])]
methodBinds env body = do
  bs <- parseLocalDecs (eCtx env) body
  forM bs $ \b -> case b of
    BFun m _ cs -> pure (m, cs)
    BVal (VarP m) _ rhs ws -> pure (m, [C.Clause [] rhs ws])
    _ -> unsupported (eCtx env) "a pattern binding in a class or instance" ""

-- | A method's worker: equations with fewer arguments than the method's
-- type has arrows (@negate = mapV negate@) are applied to the rest.
methodWorker :: Env -> Int -> [C.Clause] -> Q ([Pat], Exp)
methodWorker env k cs = do
  cs' <- forM cs $ \(C.Clause ps b ws) -> do
    vs <- replicateM (k - length ps) (newName "eta")
    let more e = if null vs then e else EApp e (map EVar vs)
        b' = case b of
          Plain e -> Plain (more e)
          Guarded gs -> Guarded [(g, more e) | (g, e) <- gs]
    pure (C.Clause (ps ++ map VarP vs) b' ws)
  funBody env k cs'

-- | A data type of the block deriving Functor: the Foldable and Traversable
-- instances that 'fmap' in differentiable code needs, for the type itself
-- when it is reused as is, or for its dual twin (all three there).
-- | A parametrised type of the block reused as is: its 'Force' instance
-- ("Numeric.DualRev.Internal.Compile.Derive").
forceDec :: TyEnv -> Dec -> Q [Dec]
forceDec tenv d = case d of
  DataD _ n tvs _ cons _ | M.notMember n (tyDuals tenv) -> go n tvs cons
  NewtypeD _ n tvs _ con _ | M.notMember n (tyDuals tenv) -> go n tvs [con]
  _ -> pure []
  where
    go n tvs cons = mapM conFields cons >>= forceInstance n (map unit tvs)
    unit (PlainTV v _) = PlainTV v ()
    unit (KindedTV v _ k) = KindedTV v () k

functorDecs :: TyEnv -> Dec -> Q [Dec]
functorDecs tenv d = case d of
  DataD _ n tvs _ cons ders -> go n tvs cons ders
  NewtypeD _ n tvs _ con ders -> go n tvs [con] ders
  _ -> pure []
  where
    go n tvs cons ders
      | ''Functor `notElem` derived = pure []
      | Just n' <- M.lookup n (tyDuals tenv) = do
          cs <- forM cons $ \c -> do
            (cn, fts) <- conFields c
            fts' <- mapM (transType tenv) fts
            pure (dualConName cn, fts')
          traversableInstances n' (map unit tvs) cs []
      | otherwise = do
          cs <- mapM conFields cons
          traversableInstances n (map unit tvs) cs derived
      where derived = [c | DerivClause _ ps <- ders, ConT c <- ps]
    unit (PlainTV v _) = PlainTV v ()
    unit (KindedTV v _ k) = KindedTV v () k

