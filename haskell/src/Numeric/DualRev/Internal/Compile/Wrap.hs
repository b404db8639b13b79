{-# LANGUAGE TemplateHaskell #-}
{-# OPTIONS_HADDOCK hide #-}
-- | Internal, not a stable API: part of the Template Haskell front end,
-- which GHC runs at compile time.
--
-- The wrappers behind 'Numeric.DualRev.grad' and friends: from the type of
-- the function they generate the walks over its input structure (making
-- input nodes, reading adjoints back into a value of the input's shape) and
-- its output structure (reading values, seeding cotangents, listing output
-- nodes), then hand them to the runners of "Numeric.DualRev.Internal.Run.Driver.Runners".
module Numeric.DualRev.Internal.Compile.Wrap
  ( gradQ, gradQ', differentiateQ, jacobianQ, jvpQ, jvpsQ, gnvpQ, hvpQ, hessianQ
  , sparseJacobianQ, sparseHessianQ
  , specialise, expandSyn, plainViaDual
    -- * For the taped splices ("Numeric.DualRev.Internal.Compile.Taped")
  , Walks (..), flatTarget, withDecs, arrow, tup, consOf
  ) where

import Control.Monad (forM, replicateM, when)
import Control.Monad.Trans.Class (lift)
import Control.Monad.Trans.State.Strict (StateT, get, modify, runStateT)
import Control.Exception (evaluate)
import qualified Data.Map as M
import qualified Data.Set as S
import Language.Haskell.TH

import Numeric.DualRev.Internal.Compile.Registry (reifyR, reifyTypeR)
import Numeric.DualRev.Internal.Run.Scalar.AD (AD)
import Numeric.DualRev.Internal.Run.Array.Data (Mat, Vec)
import Numeric.DualRev.Internal.Run.Array.Walks
import Numeric.DualRev.Internal.Run.Driver.Flat
import Numeric.DualRev.Internal.Run.Driver.Runners
import Numeric.DualRev.Internal.Compile.Types

-- | The walks of one type.
data Walks = Walks
  { wIn :: Exp    -- ^ Ptr CTape -> a -> IO a'
  , wPrim :: Exp  -- ^ Ptr CTape -> a' -> IO a
  , wSeed :: Exp  -- ^ Ptr CTape -> a' -> a -> IO ()
  , wCol :: Exp   -- ^ Ptr CTape -> a -> a' -> IO (Collect a): prepared
                  --   before the forward pass, run after each sweep
  , wOut :: Exp   -- ^ Ptr CTape -> a' -> [R] -> IO [R]: the scalars (value,
                  --   node), left to right, in front of the accumulator
  , wTrav :: Exp  -- ^ Trav a: the scalars of a plain value, left to right
  , wInS :: Exp   -- ^ Supply -> a -> IO a': every scalar its own input node
  }

type W = StateT (M.Map Type Walks, [Dec]) Q

noEnv :: TyEnv
noEnv = TyEnv S.empty M.empty M.empty

globalWalks :: [Name] -> Walks
globalWalks ns = case map VarE ns of
  [a, b, c, d, e, f, g] -> Walks a b c d e f g
  _ -> error "globalWalks: seven walks"

-- | The walks of the types without Double inside (their parts are discrete).
discreteWalks :: Walks
discreteWalks = globalWalks ['inputId, 'forceLeaf, 'seedId, 'collectId, 'outId, 'inputId, 'inputId]

walk :: Type -> W Walks
walk ty0 = do
  ty <- lift (expandSyn ty0)
  nd <- lift (needsDual noEnv ty)
  if not nd
    then do
      -- the primal walk forces discrete output parts while the tape is
      -- alive: lazily computed ones may still demand iterate elements
      f <- forceWalk ty
      pure discreteWalks { wPrim = f }
    else case typeSpine ty of
      (ConT n, []) | n == ''Double ->
        pure (globalWalks ['inputD, 'primalIO, 'seedD, 'collectD, 'outD, 'travD, 'inputS])
      (ConT n, []) | n == ''Vec ->
        pure (globalWalks ['inputVec, 'primalVec, 'seedVec, 'collectVec, 'outVec, 'travVec, 'inputSVec])
      (ConT n, []) | n == ''Mat ->
        pure (globalWalks ['inputMat, 'primalMat, 'seedMat, 'collectMat, 'outMat, 'travMat, 'inputSMat])
      (ListT, [a]) -> do
        w <- walk a
        let listOf = Walks { wIn = AppE (VarE 'inputList) (wIn w)
                           , wPrim = AppE (VarE 'primalList) (wPrim w)
                           , wSeed = AppE (VarE 'seedList) (wSeed w)
                           , wCol = AppE (VarE 'collectList) (wCol w)
                           , wOut = AppE (VarE 'outList) (wOut w)
                           , wTrav = AppE (VarE 'inputList) (wTrav w)
                           , wInS = AppE (VarE 'inputList) (wInS w) }
        -- lists of Double (synonyms included: the element walk is
        -- Double's): all input nodes in one call, all adjoints in one
        pure $ if wIn w == VarE 'inputD
          then listOf { wIn = VarE 'inputDoubles, wCol = VarE 'collectDoubles }
          else listOf
      (TupleT k, as) | length as == k -> tupleWalks as
      (ConT n, as) -> dataWalks ty n as
      (ArrowT, _) -> lift (fail "dualrev: cannot differentiate a function whose input or output holds functions")
      _ -> lift (fail ("dualrev: unsupported type in the input or output of a differentiated function: "
                        ++ pprint ty ++ " (it must be monomorphic)"))

expandSyn :: Type -> Q Type
expandSyn ty = case typeSpine ty of
  (ConT n, args) -> do
    info <- recover (pure Nothing) (Just <$> reifyTypeR n)
    case info of
      Just (TyConI (TySynD _ tvs rhs)) | length tvs <= length args -> do
        let sub = M.fromList (zip (map tvName tvs) args)
            rest = drop (length tvs) args
        expandSyn (foldl AppT (substTy sub rhs) rest)
      _ -> pure ty
  _ -> pure ty

tvName :: TyVarBndr flag -> Name
tvName (PlainTV n _) = n
tvName (KindedTV n _ _) = n

substTy :: M.Map Name Type -> Type -> Type
substTy s t = case t of
  VarT n -> M.findWithDefault t n s
  AppT a b -> AppT (substTy s a) (substTy s b)
  SigT a k -> SigT (substTy s a) k
  ParensT a -> ParensT (substTy s a)
  _ -> t

tupleWalks :: [Type] -> W Walks
tupleWalks as = do
  ws <- mapM walk as
  let k = length as
  lift $ do
    t <- newName "t"
    xs <- replicateM k (newName "x")
    ds <- replicateM k (newName "d")
    cs <- replicateM k (newName "c")
    acc <- newName "acc"
    let tupP' = TupP . map VarP
        tupE' = TupE . map (Just . VarE)
        doBind vs exps res = DoE Nothing ([BindS (VarP v) e | (v, e) <- zip vs exps]
                                          ++ [NoBindS (AppE (VarE 'pure) res)])
    ys <- replicateM k (newName "y")
    ks <- replicateM k (newName "k")
    -- the walks that map each component: \t (x1, ..) -> (,..) <$> w1 t x1 <*> ..
    let mapping sel = LamE [VarP t, tupP' xs] $
          doBind ys [AppE (AppE (sel w) (VarE t)) (VarE x) | (w, x) <- zip ws xs] (tupE' ys)
    pure Walks
      { wIn = mapping wIn
      , wPrim = mapping wPrim
      , wTrav = mapping wTrav
      , wInS = mapping wInS
      , wSeed = LamE [VarP t, tupP' ds, tupP' cs] $
          DoE Nothing ([NoBindS (foldl AppE (wSeed w) [VarE t, VarE d, VarE c])
                       | (w, d, c) <- zip3 ws ds cs] ++ [NoBindS (AppE (VarE 'pure) (TupE []))])
      , wCol = LamE [VarP t, tupP' xs, tupP' ds] $
          collectAll ks ys [foldl AppE (wCol w) [VarE t, VarE x, VarE d] | (w, x, d) <- zip3 ws xs ds] (tupE' ys)
      , wOut = LamE [VarP t, tupP' ds, VarP acc] $
          seedChain t acc (zip ws ds)
      }

-- | @Ptr CTape -> a -> IO a@ for a type without Double inside: evaluates
-- the value completely (each leaf to weak head normal form), so that nothing
-- of it is computed after the tape is gone (the elements of 'iterate' are
-- recorded when first demanded).
forceWalk :: Type -> W Exp
forceWalk ty0 = do
  ty <- lift (expandSyn ty0)
  case typeSpine ty of
    (ListT, [a]) -> AppE (VarE 'primalList) <$> forceWalk a
    (TupleT k, as) | k > 0 && length as == k -> do
      fs <- mapM forceWalk as
      lift $ do
        t <- newName "t"
        xs <- replicateM k (newName "x")
        ys <- replicateM k (newName "y")
        pure (LamE [VarP t, TupP (map VarP xs)] (DoE Nothing
               ([BindS (VarP y) (AppE (AppE f (VarE t)) (VarE x)) | (f, x, y) <- zip3 fs xs ys]
                ++ [NoBindS (AppE (VarE 'pure) (TupE (map (Just . VarE) ys)))])))
    (ConT n, as) | n `notElem` leafTypes -> do
      (memo, _) <- get
      let key = AppT (ConT ''IO) ty
      case M.lookup key memo of
        Just w -> pure (wPrim w)
        Nothing -> do
          info <- lift (recover (pure Nothing) (Just <$> reifyTypeR n))
          let decl = case info of
                Just (TyConI (DataD _ _ tvs _ cons _)) -> Just (tvs, cons)
                Just (TyConI (NewtypeD _ _ tvs _ con _)) -> Just (tvs, [con])
                _ -> Nothing
          case decl of
            Just (tvs, cons) | all plainCon cons -> do
              fn <- lift (newName ("_force_" ++ nameBase n))
              t <- lift (newName "_t")
              d <- lift (newName "d")
              modify (\(m, ds) -> (M.insert key (leaf { wPrim = VarE fn }) m, ds))
              let sub = M.fromList (zip (map tvName tvs) as)
              alts <- forM cons $ \c -> do
                (cn, fts) <- lift (conFields c)
                prims <- lift (mapM (isPrimTy . substTy sub) fts)
                if or prims then pure Nothing else do
                  fs <- mapM (forceWalk . substTy sub) fts
                  lift $ do
                    xs <- replicateM (length fs) (newName "x")
                    ys <- replicateM (length fs) (newName "y")
                    pure (Just (Match (ConP cn (map VarP xs)) (NormalB (DoE Nothing
                      ([BindS (VarP y) (AppE (AppE f (VarE t)) (VarE x)) | (f, x, y) <- zip3 fs xs ys]
                       ++ [NoBindS (AppE (VarE 'pure) (foldl AppE (ConE cn) (map VarE ys)))]))) []))
              let body = maybe (AppE (VarE 'evaluate) (VarE d)) (CaseE (VarE d)) (sequence alts)
              modify (\(m, ds) -> (m, FunD fn [Clause [VarP t, VarP d] (NormalB body) []] : ds))
              pure (VarE fn)
            _ -> pure (wPrim leaf)
    _ -> pure (wPrim leaf)
  where
    leaf = discreteWalks
    leafTypes = [''Int, ''Integer, ''Char, ''Word, ''Float, ''Double]
    plainCon c = case c of { NormalC {} -> True; RecC {} -> True; InfixC {} -> True; _ -> False }
    isPrimTy t = case typeSpine t of
      (ConT m, _) -> recover (pure True) $ do
        i <- reifyTypeR m
        pure (case i of { PrimTyConI {} -> True; _ -> False })
      (VarT _, _) -> pure True
      (ArrowT, _) -> pure True
      _ -> pure False

-- | Walks of a user (or library) data type instance, as local functions so
-- that recursive types work.
dataWalks :: Type -> Name -> [Type] -> W Walks
dataWalks ty tn args = do
  (memo, _) <- get
  case M.lookup ty memo of
    Just w -> pure w
    Nothing -> do
      names <- lift (replicateM 7 (newName ("_walk_" ++ nameBase tn)))
      let self = globalWalks names
      modify (\(m, ds) -> (M.insert ty self m, ds))
      cons <- lift (consOf "" ty tn args)
      declNeeds <- lift (needsDual noEnv (ConT tn))
      cinfo <- forM cons $ \(cn, fts) -> do
        cn' <- if not declNeeds then pure cn else do
          md <- lift (externalDual dualConName cn)
          maybe (lift (fail ("dualrev: the dual of constructor " ++ pprint cn ++ " is missing; "
                             ++ "declare its type in a differentiable block"))) pure md
        ws <- mapM walk fts
        pure (cn, cn', ws)
      decs <- lift (mkDataWalkDecs names cinfo)
      modify (\(m, ds) -> (m, decs ++ ds))
      pure self

-- | The constructors of a data type instance (the type ty, tn applied to
-- args) with their fields' types, the arguments substituted; what names
-- the splice that fails on another kind of type.
consOf :: String -> Type -> Name -> [Type] -> Q [(Name, [Type])]
consOf what ty tn args = do
  info <- reifyTypeR tn
  (tvs, cons) <- case info of
    TyConI (DataD _ _ tvs _ cons _) -> pure (tvs, cons)
    TyConI (NewtypeD _ _ tvs _ con _) -> pure (tvs, [con])
    _ -> fail ("dualrev: " ++ what ++ (if null what then "" else " ") ++ "cannot walk the type " ++ pprint ty)
  let sub = M.fromList (zip (map tvName tvs) args)
  forM cons $ \c -> do
    (cn, fts) <- conFields c
    pure (cn, map (substTy sub) fts)

mkDataWalkDecs :: [Name] -> [(Name, Name, [Walks])] -> Q [Dec]
mkDataWalkDecs [nIn, nPrim, nSeed, nCol, nOut, nTrav, nInS] cinfo = do
  t <- newName "t"
  x <- newName "x"
  d <- newName "d"
  c <- newName "c"
  acc <- newName "acc"
  let mismatch = AppE (VarE 'throwShape) (LitE (StringL "the cotangent has another constructor than the output"))
      conP' n vs = ConP n (map VarP vs)
      conE' n vs = foldl AppE (ConE n) (map VarE vs)
      bindAll vs exps res = DoE Nothing ([BindS (VarP v) e | (v, e) <- zip vs exps]
                                         ++ [NoBindS (AppE (VarE 'pure) res)])
      fresh k s = replicateM k (newName s)
  -- the walks that map each field, from constructor `from` to `to`
  let mapping sel from to = do
        alts <- forM cinfo $ \info@(_, _, ws) -> do
          as <- fresh (length ws) "a"
          bs <- fresh (length ws) "b"
          pure (Match (conP' (from info) as)
                  (NormalB (bindAll bs [foldl AppE (sel w) [VarE t, VarE a] | (w, a) <- zip ws as] (conE' (to info) bs))) [])
        pure (Clause [VarP t, VarP x] (NormalB (CaseE (VarE x) alts)) [])
      plainCon (cn, _, _) = cn
      dualCon (_, cn', _) = cn'
  inClause <- mapping wIn plainCon dualCon
  primClause <- mapping wPrim dualCon plainCon
  travClause <- mapping wTrav plainCon plainCon
  inSClause <- mapping wInS plainCon dualCon
  seedAlts <- forM cinfo $ \(cn, cn', ws) -> do
    bs <- fresh (length ws) "b"
    cs <- fresh (length ws) "c"
    pure (Match (TupP [conP' cn' bs, conP' cn cs])
            (NormalB (DoE Nothing ([NoBindS (foldl AppE (wSeed w) [VarE t, VarE b, VarE cc]) | (w, b, cc) <- zip3 ws bs cs]
                                   ++ [NoBindS (AppE (VarE 'pure) (TupE []))]))) [])
  colAlts <- forM cinfo $ \(cn, cn', ws) -> do
    as <- fresh (length ws) "a"
    bs <- fresh (length ws) "b"
    gs <- fresh (length ws) "g"
    ks <- fresh (length ws) "k"
    let col = collectAll ks gs [foldl AppE (wCol w) [VarE t, VarE a, VarE b] | (w, a, b) <- zip3 ws as bs] (conE' cn gs)
    pure (Match (TupP [conP' cn as, conP' cn' bs]) (NormalB col) [])
  outAlts <- forM cinfo $ \(_, cn', ws) -> do
    bs <- fresh (length ws) "b"
    pure (Match (conP' cn' bs) (NormalB (seedChain t acc (zip ws bs))) [])
  let many = length cinfo > 1
      fallback = [Match WildP (NormalB mismatch) [] | many]
  pure
    [ FunD nIn [inClause]
    , FunD nPrim [primClause]
    , FunD nTrav [travClause]
    , FunD nInS [inSClause]
    , FunD nSeed [Clause [VarP t, VarP d, VarP c] (NormalB (CaseE (TupE [Just (VarE d), Just (VarE c)]) (seedAlts ++ fallback))) []]
    , FunD nCol [Clause [VarP t, VarP x, VarP d] (NormalB (CaseE (TupE [Just (VarE x), Just (VarE d)]) (colAlts ++ fallback))) []]
    , FunD nOut [Clause [VarP t, VarP d, VarP acc] (NormalB (CaseE (VarE d) outAlts)) []]
    ]
mkDataWalkDecs _ _ = fail "mkDataWalkDecs"

-- | The collect walk of a product: prepare every component's read-out,
-- then (after a sweep) run them and build @res@ from their results gs:
-- @do { k1 <- e1; ..; pure (do { g1 <- k1; ..; pure res }) }@.
collectAll :: [Name] -> [Name] -> [Exp] -> Exp -> Exp
collectAll ks gs exps res =
  let readOut = DoE Nothing ([BindS (VarP g) (VarE k) | (g, k) <- zip gs ks]
                             ++ [NoBindS (AppE (VarE 'pure) res)])
  in DoE Nothing ([BindS (VarP k) e | (k, e) <- zip ks exps]
                  ++ [NoBindS (AppE (VarE 'pure) readOut)])

-- | The scalars of the components, left to right, in front of acc:
-- @out1 t d1 =<< out2 t d2 =<< ... pure acc@.
seedChain :: Name -> Name -> [(Walks, Name)] -> Exp
seedChain t acc = foldr step (AppE (VarE 'pure) (VarE acc))
  where
    step (w, d) rest = InfixE (Just (AppE (AppE (wOut w) (VarE t)) (VarE d))) (VarE '(=<<)) (Just rest)

------------------------------------------------------------------------------

-- | The function's argument and result types, and its dual.
target :: String -> Name -> Q (Type, Type, Exp)
target what f = do
  -- a plain definition of the same declaration group cannot be reified
  info <- recover (fail ("dualrev: `" ++ nameBase f ++ "' is not differentiable: define it inside "
                         ++ "differentiable [d| ... |]")) (reifyR f)
  ty0 <- case info of
    VarI _ t _ -> pure t
    _ -> fail ("dualrev: " ++ what ++ " expects a function name, got " ++ pprint f)
  ty <- specialise ty0
  (a, b) <- case ty of
    AppT (AppT ArrowT a) b -> pure (a, b)
    _ -> fail ("dualrev: " ++ what ++ " expects a function of one argument (use a tuple for several); `"
               ++ nameBase f ++ "' has type " ++ pprint ty)
  md <- externalDual dualValName f
  case md of
    Just d -> do
      -- a definition without arguments (f = g . h) has a dual computation
      -- `AD (a' -> AD b')': run it, then apply the function it gives
      di <- reifyR d
      case di of
        VarI _ (AppT (ConT m) _) _ | m == ''AD -> do
          x <- newName "x"
          g <- newName "g"
          pure (a, b, LamE [VarP x] (InfixE (Just (VarE d)) (VarE '(>>=))
                                       (Just (LamE [VarP g] (AppE (VarE g) (VarE x))))))
        _ -> pure (a, b, VarE d)
    Nothing -> fail ("dualrev: `" ++ nameBase f ++ "' is not differentiable: define it inside "
                     ++ "differentiable [d| ... |] (and export its dual `" ++ nameBase (dualValName f)
                     ++ "' too if the module has an export list)")

-- | A polymorphic function is differentiated where Haskell's defaulting
-- would put it: a type variable with an 'Integral' constraint at 'Integer',
-- every other constrained one at 'Double'.  Instances of the function's
-- classes at those types are checked by GHC where the splice is used.
specialise :: Type -> Q Type
specialise ty = case ty of
  ForallT tvs ctx body -> do
    let constrained v = [c | p <- ctx, (c, vs) <- [predHead p], v `elem` vs]
        -- a signature from a quote may leave its forall implicit
        vars = if null tvs then nubOrd (freeVars body ++ concatMap freeVars ctx) else map tvName tvs
        -- an unconstrained one stays: the splice's type leaves it to the use
        pick v = case constrained v of
          [] -> []
          cs | ''Integral `elem` cs -> [(v, ConT ''Integer)]
             | otherwise -> [(v, ConT ''Double)]
    pure (substTy (M.fromList (concatMap pick vars)) body)
  _ -> pure ty
  where
    predHead p = case typeSpine p of
      (ConT c, args) -> (c, [v | VarT v <- args])
      _ -> (''(), [])
    freeVars t = case t of
      VarT v -> [v]
      AppT g x -> freeVars g ++ freeVars x
      SigT x _ -> freeVars x
      ParensT x -> freeVars x
      _ -> []
    nubOrd = S.toList . S.fromList

runW :: W a -> Q (a, [Dec])
runW m = do
  (x, (_, ds)) <- runStateT m (M.empty, [])
  pure (x, ds)

withDecs :: [Dec] -> Exp -> Exp
withDecs [] e = e
withDecs ds e = LetE ds e

scalarResult :: String -> Name -> Type -> Q ()
scalarResult what f b = do
  b' <- expandSyn b
  case b' of
    ConT n | n == ''Double -> pure ()
    _ -> fail ("dualrev: " ++ what ++ " needs a function returning Double; `" ++ nameBase f
               ++ "' returns " ++ pprint b ++ " (use differentiate or jacobian)")

gradQ, gradQ', differentiateQ, jacobianQ, jvpQ, jvpsQ, gnvpQ, hvpQ, hessianQ :: Name -> Q Exp
gradQ f = do
  e <- gradQ' f
  pure (InfixE (Just (VarE 'snd)) (VarE '(.)) (Just e))

gradQ' f = do
  (a, b, d) <- target "grad" f
  scalarResult "grad" f b
  (wa, ds) <- runW (walk a)
  pure (SigE (withDecs ds (foldl AppE (VarE 'gradRun) [wIn wa, wCol wa, d]))
             (arrow a (tup [ConT ''Double, a])))

differentiateQ f = do
  (a, b, d) <- target "differentiate" f
  ((wa, wb), ds) <- runW ((,) <$> walk a <*> walk b)
  pure (SigE (withDecs ds (foldl AppE (VarE 'differentiateRun) [wIn wa, wPrim wb, wSeed wb, wCol wa, d]))
             (arrow a (tup [b, arrow b a])))

jacobianQ f = do
  (a, _, wa, wb, d, ds) <- flatTarget "jacobian" f False
  pure (SigE (withDecs ds (foldl AppE (VarE 'jacobianRun) [wTrav wa, wInS wa, wOut wb, d]))
             (arrow a (AppT ListT a)))

jvpQ f = do
  (a, b, wa, wb, d, ds) <- flatTarget "jvp" f False
  pure (SigE (withDecs ds (foldl AppE (VarE 'jvpRun) [wTrav wa, wInS wa, wOut wb, wPrim wb, wTrav wb, d]))
             (arrow a (arrow a (tup [b, b]))))

jvpsQ f = do
  (a, b, wa, wb, d, ds) <- flatTarget "jvps" f False
  pure (SigE (withDecs ds (foldl AppE (VarE 'jvpsRun) [wTrav wa, wInS wa, wOut wb, wPrim wb, wTrav wb, d]))
             (arrow a (arrow (AppT ListT a) (tup [b, AppT ListT b]))))

gnvpQ f = do
  (a, _, wa, wb, d, ds) <- flatTarget "gnvp" f False
  pure (SigE (withDecs ds (foldl AppE (VarE 'gnvpRun) [wTrav wa, wInS wa, wOut wb, d]))
             (arrow a (arrow a a)))

hvpQ f = do
  (a, _, wa, _, d, ds) <- flatTarget "hvp" f True
  pure (SigE (withDecs ds (foldl AppE (VarE 'hvpRun) [wIn wa, wSeed wa, wCol wa, d]))
             (arrow a (arrow a a)))

hessianQ f = do
  (a, _, wa, _, d, ds) <- flatTarget "hessian" f True
  pure (SigE (withDecs ds (foldl AppE (VarE 'hessianRun) [wTrav wa, wInS wa, d]))
             (arrow a (AppT ListT a)))

-- | A block function's plain definition computed by its dual, for a
-- function whose body takes derivatives ('Numeric.DualRev.derivative'
-- and the like, whose plain versions cannot see the code they are given):
-- the arguments made inputs of a fresh tape, the dual run, its value
-- read.  From the function's (monomorphic) signature and its dual value;
-- Nothing for a type the walks do not cover (a function argument), whose
-- plain definition stays as written.
plainViaDual :: Type -> Exp -> Q (Maybe Exp)
plainViaDual ty0 d = recover (pure Nothing) $ do
  ty <- expandSyn ty0
  let args (AppT (AppT ArrowT x) r) = let (xs, res) = args r in (x : xs, res)
      args t = ([], t)
      (as, b) = args ty
  case as of
    [] -> pure Nothing
    _ -> do
      let a = case as of { [x] -> x; _ -> tup as }
      ((wa, wb), ds) <- runW ((,) <$> walk a <*> walk b)
      xs <- replicateM (length as) (newName "x")
      -- the dual takes the arguments one at a time, each step in AD
      let step e x = do
            g <- newName "g"
            pure (InfixE (Just e) (VarE '(>>=)) (Just (LamE [VarP g] (AppE (VarE g) (VarE x)))))
      dual <- case xs of
        [x] -> pure (LamE [VarP x] (AppE d (VarE x)))
        x : rest -> do
          body <- foldlM' step (AppE d (VarE x)) rest
          pure (LamE [TupP (map VarP xs)] body)
        [] -> fail "unreachable"
      let arg = case xs of { [x] -> VarE x; _ -> TupE (map (Just . VarE) xs) }
          run = foldl AppE (VarE 'differentiateRun) [wIn wa, wPrim wb, wSeed wb, wCol wa, dual]
      pure (Just (LamE (map VarP xs) (AppE (VarE 'fst) (AppE (withDecs ds run) arg))))
  where
    foldlM' f z (x : rest) = f z x >>= \z' -> foldlM' f z' rest
    foldlM' _ z [] = pure z

-- | The splices' type of a sparse result: ((row, column), value).
sparseT :: Type
sparseT = AppT ListT (tup [tup [ConT ''Int, ConT ''Int], ConT ''Double])

sparseJacobianQ, sparseHessianQ :: Name -> Q Exp
sparseJacobianQ f = do
  (a, _, wa, wb, d, ds) <- flatTarget "sparseJacobian" f False
  pure (SigE (withDecs ds (foldl AppE (VarE 'sparseJacobianRun) [wTrav wa, wInS wa, wOut wb, d]))
             (arrow a sparseT))

sparseHessianQ f = do
  (a, _, wa, _, d, ds) <- flatTarget "sparseHessian" f True
  pure (SigE (withDecs ds (foldl AppE (VarE 'sparseHessianRun) [wTrav wa, wInS wa, d]))
             (arrow a sparseT))

-- | What the runners of "Numeric.DualRev.Internal.Run.Driver.Flat" need: the
-- input and output types, their walks, the dual and the walks'
-- declarations; with True, the function must return Double.
flatTarget :: String -> Name -> Bool -> Q (Type, Type, Walks, Walks, Exp, [Dec])
flatTarget what f scalar = do
  (a, b, d) <- target what f
  when scalar (scalarResult what f b)
  ((wa, wb), ds) <- runW ((,) <$> walk a <*> walk b)
  pure (a, b, wa, wb, d, ds)

-- The splice's type, written out: it pins the parts of a specialised
-- polymorphic function that no walk constrains (its discrete inputs).
arrow :: Type -> Type -> Type
arrow x y = AppT (AppT ArrowT x) y

tup :: [Type] -> Type
tup ts = foldl AppT (TupleT (length ts)) ts

