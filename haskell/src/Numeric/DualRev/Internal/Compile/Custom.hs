{-# LANGUAGE TemplateHaskell #-}
{-# OPTIONS_HADDOCK hide #-}
-- | Internal, not a stable API: part of the Template Haskell front end,
-- which GHC runs at compile time.
--
-- Custom rules: 'Numeric.DualRev.primitive' checks a function and its
-- derivatives against each other and gives the function the dual
-- definitions a differentiable block would (@f'dr@ and the worker
-- @f'drw@), which record its calls with the rule
-- ("Numeric.DualRev.Internal.Run.Control.Custom").  Blocks, other modules and the
-- splices then find them by name, as they find a block's functions.
module Numeric.DualRev.Internal.Compile.Custom
  ( primitiveDecs
  ) where

import Control.Monad (forM, replicateM, unless, when)
import Data.Char (isAlpha, toUpper)
import Data.List (intercalate)
import qualified Data.Map as M
import Data.Maybe (isJust)
import qualified Data.Set as S
import Language.Haskell.TH

import Numeric.DualRev.Internal.Compile.Parse (showLoc)
import Numeric.DualRev.Internal.Compile.Prims (lookupPrim)
import Numeric.DualRev.Internal.Compile.Registry (register, reifyR)
import Numeric.DualRev.Internal.Compile.Transform (markUsed, wrapperDec)
import Numeric.DualRev.Internal.Compile.Types
import Numeric.DualRev.Internal.Compile.Wrap (expandSyn, specialise)
import Numeric.DualRev.Internal.Run.Scalar.AD (AD)
import Numeric.DualRev.Internal.Run.Array.Data (Mat, Vec)
import Numeric.DualRev.Internal.Run.Control.Custom

-- | One argument of the function: its type, and whether it holds Doubles
-- (and so has an adjoint) or is discrete data passed as it is.
data Arg = Arg { argType :: Type, argDiff :: Bool }

-- | The declarations of a rule: the function, its VJP and maybe its JVP.
-- @entry@ is the splice's name, for messages.
primitiveDecs :: String -> Name -> Name -> Maybe Name -> Q [Dec]
primitiveDecs entry f vjp mjvp = do
  loc <- location
  let what = "the rule for `" ++ nameBase f ++ "' (" ++ entry ++ " at " ++ showLoc loc ++ ")"
      failR = ruleError what
  when (isJust (lookupPrim f)) $ failR
    [ "`" ++ nameBase f ++ "' is a primitive of differentiable code already, with the engine's "
      ++ "derivative, and a rule cannot replace it"
    , "give the rule to a function of your own instead, e.g. " ++ ownCopy (nameBase f)
      ++ ", and use that" ]
  already <- externalDual dualValName f
  when (isJust already) $ failR
    [ "`" ++ nameBase f ++ "' has a derivative already: it is defined in a differentiable block, "
      ++ "or another rule was declared for it"
    , "a rule is for a function defined outside any block (ordinary code or a foreign import), "
      ++ "declared once" ]
  fty <- valueType what "the function" f
  let (argTys, res) = arrows fty
  when (null argTys) $ failR
    [ "`" ++ nameBase f ++ "' takes no arguments (" ++ nameBase f ++ " :: " ++ shown fty ++ ")"
    , "a rule is for a function of one argument or more" ]
  args <- forM (zip [1 :: Int ..] argTys) $ \(k, t) -> do
    d <- needsDual noEnv t
    if not d then pure (Arg t False) else do
      shapeOf what ("argument " ++ show k ++ " of `" ++ nameBase f ++ "' (" ++ shown t ++ ")") t
      pure (Arg t True)
  resNeeds <- needsDual noEnv res
  unless resNeeds $ failR
    [ "`" ++ nameBase f ++ "' returns " ++ shown res ++ ", which holds no Double: it has no "
      ++ "derivative to give" ]
  shapeOf what ("the result of `" ++ nameBase f ++ "' (" ++ shown res ++ ")") res
  let diffTys = [argType a | a <- args, argDiff a]
  when (null diffTys) $ failR
    [ "no argument of `" ++ nameBase f ++ "' holds a Double (" ++ nameBase f ++ " :: "
      ++ shown fty ++ "): it has no derivative to give" ]
  let adj = case diffTys of
        [t] -> t
        ts -> tupleOf ts
      plural = if length diffTys == 1 then "" else "s"
      vjpWant = foldr arrow (tupleOf [res, arrow res adj]) argTys
      jvpWant = foldr arrow (tupleOf [res, arrow adj res]) argTys
      -- what the derivatives' results are, for the messages
      args' = case diffTys of
        [_] | length argTys == 1 -> "the argument"
            | otherwise -> "the argument that holds Doubles"
        _ -> "the " ++ show (length diffTys) ++ " arguments that hold Doubles, as a tuple in "
             ++ "their order"
      explain middle = "(the arguments of `" ++ nameBase f ++ "', then its value and a function "
                       ++ middle ++ ")"
  checkDerivative what "VJP" f fty vjp vjpWant
    (explain ("from the value's cotangent to the adjoint" ++ plural ++ " of " ++ args'))
  mapM_ (\j -> checkDerivative what "JVP" f fty j jvpWant
                 (explain ("from the tangent" ++ plural ++ " of " ++ args'
                           ++ (if null plural then " " else ", ") ++ "to the value's tangent")))
        mjvp
  decs <- ruleDecs what f args res vjp mjvp
  register decs
  pure decs

-- | The type of a value, defaulted as the splices default a polymorphic
-- function (constrained type variables at Double or Integer), its synonyms
-- expanded.
valueType :: String -> String -> Name -> Q Type
valueType what role n = do
  info <- recover (ruleError what
    [ role ++ " `" ++ nameBase n ++ "' is not known at the rule"
    , "define it above the rule's splice: a splice sees only the declarations before it" ])
    (reifyR n)
  case info of
    VarI _ t _ -> specialise t >>= normalise
    _ -> ruleError what [ role ++ " `" ++ nameBase n ++ "' is not a function (a constructor or a "
                          ++ "class method cannot have a rule); wrap it in a function of its own" ]

-- | Check a derivative's type against the one wanted.
checkDerivative :: String -> String -> Name -> Type -> Name -> Type -> String -> Q ()
checkDerivative what kind f fty g want explain = do
  gty <- valueType what ("the " ++ kind) g
  let have = length (fst (arrows gty))
      need = length (fst (arrows fty))
      problem
        | have /= need = "the " ++ kind ++ " `" ++ nameBase g ++ "' takes " ++ count have
                         ++ ", but `" ++ nameBase f ++ "' takes " ++ count need
        | otherwise = "the " ++ kind ++ " `" ++ nameBase g ++ "' does not have the type of a "
                      ++ kind ++ " of `" ++ nameBase f ++ "'"
  when (gty /= want) $ ruleError what
    [ problem
    , "  " ++ nameBase f ++ " :: " ++ shown fty
    , "  " ++ nameBase g ++ " :: " ++ shown gty
    , "write the " ++ kind ++ " with the type"
    , "  " ++ nameBase g ++ " :: " ++ shown want
    , explain ]
  where
    count 1 = "1 argument"
    count k = show k ++ " arguments"

-- | A rule's result, or an argument holding Doubles, must be built from
-- Double, lists and tuples.
shapeOf :: String -> String -> Type -> Q ()
shapeOf what place t0 = go t0
  where
    go t = case typeSpine t of
      (ConT n, []) | n == ''Double -> pure ()
      (ListT, [a]) -> go a
      (TupleT k, as) | length as == k, k >= 2, k <= shapeTupleMax -> mapM_ go as
      (TupleT k, _) | k > shapeTupleMax -> refuse
        ("a tuple of " ++ show k ++ " components; a rule's tuples have at most "
         ++ show shapeTupleMax ++ " (nest them)")
      (ConT n, []) | n == ''Vec || n == ''Mat -> refuse
        (nameBase n ++ ", which a rule does not take; use [Double] (vtoList and vfromList convert)")
      _ -> refuse (shown t ++ ", which a rule does not take")
    refuse why = ruleError what
      [ place ++ " holds " ++ why
      , "a rule's result, and each argument holding Doubles, is built from Double, lists and "
        ++ "tuples; arguments of other types must hold no Double (Int, Bool, Constant ...)" ]

-- | The worker and the dual value.
ruleDecs :: String -> Name -> [Arg] -> Type -> Name -> Maybe Name -> Q [Dec]
ruleDecs what f args res vjp mjvp = do
  let w = dualWorkerName f
      d = dualValName f
      k = length args
  as <- replicateM k (newName "a")
  ps <- replicateM k (newName "p")
  argTys' <- mapM (transType noEnv . argType) args
  res' <- transType noEnv res
  let diff = [(a, p) | (a, p, arg) <- zip3 as ps args, argDiff arg]
      -- the plain values of the arguments, as the rule takes them
      plainArgs = [ if argDiff arg then VarE p else VarE a | (a, p, arg) <- zip3 as ps args ]
      primals = [ ValD (VarP p) (NormalB (AppE (VarE 'primal) (VarE a))) [] | (a, p) <- diff ]
      xs = foldr (\(a, _) r -> app (VarE 'duals) [VarE a, r]) (ListE []) diff
  -- the VJP at the arguments; its adjoints as scalars, if shaped like them
  y <- newName "y"
  back <- newName "back"
  ybar <- newName "ybar"
  cs <- replicateM (length diff) (newName "c")
  let conforming = foldr1 (\x r -> app (VarE '(&&)) [x, r])
                     [ app (VarE 'conform) [VarE p, VarE c] | ((_, p), c) <- zip diff cs ]
      adjScalars = foldr (\c r -> app (VarE 'scalars) [VarE c, r]) (ListE []) cs
      backE = LamE [VarP ybar]
        (CaseE (AppE (VarE back) (VarE ybar))
          [Match (tupP' cs)
                 (NormalB (CondE conforming (AppE (ConE 'Just) adjScalars) (ConE 'Nothing))) []])
      vjpAt = CaseE (app (VarE vjp) plainArgs)
        [Match (TupP [VarP y, VarP back]) (NormalB (TupE [Just (VarE y), Just backE])) []]
  -- the JVP at the arguments; its tangents from scalars, shaped like them
  jvpAt <- case mjvp of
    Nothing -> pure (ConE 'Nothing)
    Just j -> do
      fwd <- newName "fwd"
      ts <- newName "ts"
      tvs <- replicateM (length diff) (newName "tan")
      rs <- replicateM (length diff) (newName "rest")
      let rests = VarE ts : map VarE rs
          -- the last argument leaves no rest to use
          restPats = map VarP (init rs) ++ [WildP]
          binds = [ ValD (TupP [VarP tv, r]) (NormalB (app (VarE 'fill) [VarE p, rin])) []
                  | ((_, p), tv, r, rin) <- zip4 diff tvs restPats rests ]
          tangents = LetE binds (tupE' (map VarE tvs))
      -- the JVP's own value is left unevaluated: the VJP's is the call's
      pure (AppE (ConE 'Just) (CaseE (app (VarE j) plainArgs)
        [Match (TupP [WildP, VarP fwd]) (NormalB (LamE [VarP ts] (AppE (VarE fwd) tangents))) []]))
  let body = LetE primals (app (VarE 'customD) [LitE (StringL what), xs, vjpAt, jvpAt])
      workerTy = foldr arrow (AppT (ConT ''AD) res') argTys'
  valTy <- transType noEnv (foldr arrow res (map argType args))
  wrapper <- wrapperDec d w k
  pure ([ SigD w workerTy, FunD w [Clause (map VarP as) (NormalB body) []]
        , SigD d valTy, wrapper, PragmaD (InlineP d Inline FunLike AllPhases) ]
        ++ markUsed d valTy)
  where
    zip4 (a : at) (b : bt) (c : ct) (e : et) = (a, b, c, e) : zip4 at bt ct et
    zip4 _ _ _ _ = []

------------------------------------------------------------------------------

noEnv :: TyEnv
noEnv = TyEnv S.empty M.empty M.empty

-- | The type with every synonym expanded and @a %1 -> b@ read as @a -> b@.
normalise :: Type -> Q Type
normalise t0 = do
  t <- expandSyn t0
  case t of
    AppT (AppT (AppT MulArrowT _) a) b -> arrow <$> normalise a <*> normalise b
    AppT a b -> AppT <$> normalise a <*> normalise b
    ParensT a -> normalise a
    SigT a _ -> normalise a
    ForallT tvs ctx a -> ForallT tvs ctx <$> normalise a
    _ -> pure t

arrows :: Type -> ([Type], Type)
arrows (AppT (AppT ArrowT a) b) = let (as, r) = arrows b in (a : as, r)
arrows t = ([], t)

arrow :: Type -> Type -> Type
arrow a b = AppT (AppT ArrowT a) b

tupleOf :: [Type] -> Type
tupleOf ts = foldl AppT (TupleT (length ts)) ts

app :: Exp -> [Exp] -> Exp
app = foldl AppE

tupP' :: [Name] -> Pat
tupP' [c] = VarP c
tupP' cs = TupP (map VarP cs)

tupE' :: [Exp] -> Exp
tupE' [e] = e
tupE' es = TupE (map Just es)

-- | A definition of one's own for a built-in, to suggest: @myTanh = tanh@.
ownCopy :: String -> String
ownCopy n@(c : cs)
  | isAlpha c = "my" ++ toUpper c : cs ++ " = " ++ n
ownCopy n = "(." ++ n ++ ".) = (" ++ n ++ ")"

-- | A type as the user would write it, on one line: names without their
-- modules, lists in brackets, tuples in parentheses.
shown :: Type -> String
shown = go False
  where
    -- the flag: an argument position (an application or arrow needs parentheses)
    go arg t = case typeSpine t of
      (ArrowT, [a, b]) -> paren arg (go True a ++ " -> " ++ go False b)
      (ListT, [a]) -> "[" ++ go False a ++ "]"
      (TupleT k, as) | length as == k, k /= 1 -> "(" ++ intercalate ", " (map (go False) as) ++ ")"
      (g, []) -> atom g
      (g, as) -> paren arg (unwords (atom g : map (go True) as))
    atom t = case t of
      ConT n -> nameBase n
      VarT n -> nameBase n
      ListT -> "[]"
      TupleT k -> "(" ++ replicate (k - 1) ',' ++ ")"
      ArrowT -> "(->)"
      _ -> unwords (words (pprint t))
    paren True x = "(" ++ x ++ ")"
    paren False x = x

ruleError :: String -> [String] -> Q a
ruleError what ls = fail (intercalate "\n  " (("dualrev: " ++ what ++ ": " ++ head ls) : tail ls))
