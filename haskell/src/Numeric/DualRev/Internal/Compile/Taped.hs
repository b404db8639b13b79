{-# LANGUAGE TemplateHaskell #-}
{-# OPTIONS_HADDOCK hide #-}
-- | Internal, not a stable API: part of the Template Haskell front end,
-- which GHC runs at compile time.
--
-- The taped splices ('Numeric.DualRev.tapedGrad'): the flat walks of
-- "Numeric.DualRev.Internal.Compile.Wrap", and the fill walk of the input
-- type ("Numeric.DualRev.Internal.Run.Driver.Fill"), generated here only: it
-- compares the parts without a Double inside with '==', so it needs 'Eq'
-- there, which the other splices do not ask of an input (the Doubles of a
-- 'Constant' by their bits).
module Numeric.DualRev.Internal.Compile.Taped
  ( tapedGradQ, tapedGradQ', tapedJacobianQ, tapedHvpQ
  ) where

import Control.Monad (forM, replicateM)
import Control.Monad.Trans.Class (lift)
import Control.Monad.Trans.State.Strict (StateT, get, modify, runStateT)
import qualified Data.Map as M
import qualified Data.Set as S
import Language.Haskell.TH

import Numeric.DualRev.Internal.Compile.Types
import Numeric.DualRev.Internal.Compile.Wrap
import Numeric.DualRev.Internal.Run.Array.Data (Mat, Vec)
import Numeric.DualRev.Internal.Run.Driver.Constant (Constant)
import Numeric.DualRev.Internal.Run.Driver.Fill
import Numeric.DualRev.Internal.Run.Driver.Taped (tapedGradRun, tapedHvpRun, tapedJacobianRun)

type F = StateT (M.Map Type Name, [Dec]) Q

tapedGradQ, tapedGradQ' :: Name -> Q Exp
tapedGradQ f = do
  e <- tapedGradQ' f
  pure (InfixE (Just (VarE 'snd)) (VarE '(.)) (Just e))

tapedGradQ' f = do
  (a, _, wa, _, d, ds) <- flatTarget "tapedGrad" f True
  (fill, fds) <- fillWalk a
  (tk, tds) <- takeWalk a
  pure (SigE (withDecs (ds ++ fds ++ tds) (foldl AppE (VarE 'tapedGradRun) [fill, tk, wTrav wa, wInS wa, d]))
             (arrow a (tup [ConT ''Double, a])))

tapedJacobianQ :: Name -> Q Exp
tapedJacobianQ f = do
  (a, _, wa, wb, d, ds) <- flatTarget "tapedJacobian" f False
  (fill, fds) <- fillWalk a
  (tk, tds) <- takeWalk a
  pure (SigE (withDecs (ds ++ fds ++ tds)
                (foldl AppE (VarE 'tapedJacobianRun) [fill, tk, wTrav wa, wInS wa, wOut wb, d]))
             (arrow a (AppT ListT a)))

tapedHvpQ :: Name -> Q Exp
tapedHvpQ f = do
  (a, _, wa, _, d, ds) <- flatTarget "tapedHvp" f True
  (fill, fds) <- fillWalk a
  (tk, tds) <- takeWalk a
  pure (SigE (withDecs (ds ++ fds ++ tds) (foldl AppE (VarE 'tapedHvpRun) [fill, tk, wTrav wa, wInS wa, d]))
             (arrow a (arrow a a)))

-- | The take walk of a type (a @Take a@, "Numeric.DualRev.Internal.Run.Driver.Fill")
-- and the local declarations it uses.
takeWalk :: Type -> Q (Exp, [Dec])
takeWalk ty = do
  (e, (_, ds)) <- runStateT (walkT ty) (M.empty, [])
  pure (e, ds)

-- | What one of the two walks does at each kind of part of an input type:
-- the shape of the type is looked at once, in 'walkWith'.
data Walk = Walk
  { wLeaf :: Type -> F Exp        -- ^ a part without a Double inside
  , wDouble, wVec, wMat :: Name   -- ^ the scalar and the arrays
  , wDoubles :: Name              -- ^ a list of Doubles
  , wList :: Name                 -- ^ a list of anything else, given its walk
  , wTuple :: [Exp] -> Q Exp      -- ^ a tuple, given its fields' walks
  , wData :: Type -> Name -> [Type] -> F Exp -- ^ a data type
  }

walkWith :: Walk -> Type -> F Exp
walkWith w ty0 = do
  ty <- lift (expandSyn ty0)
  nd <- lift (needsDual (TyEnv S.empty M.empty M.empty) ty)
  if not nd
    then wLeaf w ty
    else case typeSpine ty of
      (ConT n, []) | n == ''Double -> pure (VarE (wDouble w))
                   | n == ''Vec -> pure (VarE (wVec w))
                   | n == ''Mat -> pure (VarE (wMat w))
      (ListT, [a]) -> do
        a' <- lift (expandSyn a)
        if a' == ConT ''Double
          then pure (VarE (wDoubles w))
          else AppE (VarE (wList w)) <$> walkWith w a
      (TupleT k, as) | length as == k -> mapM (walkWith w) as >>= lift . wTuple w
      (ConT n, as) -> wData w ty n as
      _ -> lift (fail ("dualrev: tapedGrad cannot walk the input type " ++ pprint ty))

-- | The take walk: a result shaped like the input, its scalars from a
-- buffer.
walkT :: Type -> F Exp
walkT = walkWith Walk
  { wLeaf = \_ -> pure (VarE 'takeLeaf)
  , wDouble = 'takeD, wVec = 'takeVec, wMat = 'takeMat
  , wDoubles = 'takeDoubles, wList = 'takeList
  , wTuple = \fs -> do
      xs <- replicateM (length fs) (newName "x")
      src <- newName "src"
      body <- rebuild src (TupE . map Just) (zip fs xs)
      pure (LamE [TupP (map VarP xs), VarP src] body)
  , wData = dataT
  }

-- | do { y1 <- f1 x1 src; ...; pure (build [y1, ...]) }
rebuild :: Name -> ([Exp] -> Exp) -> [(Exp, Name)] -> Q Exp
rebuild src build fxs = do
  ys <- replicateM (length fxs) (newName "y")
  pure (DoE Nothing ([BindS (VarP y) (foldl AppE f [VarE x, VarE src]) | ((f, x), y) <- zip fxs ys]
                     ++ [NoBindS (AppE (VarE 'pure) (build (map VarE ys)))]))

dataT :: Type -> Name -> [Type] -> F Exp
dataT ty tn args = do
  (memo, _) <- get
  case M.lookup ty memo of
    Just fn -> pure (VarE fn)
    Nothing -> do
      fn <- lift (newName ("_take_" ++ nameBase tn))
      modify (\(m, ds) -> (M.insert ty fn m, ds))
      cons <- lift (consOf "tapedGrad" ty tn args)
      src <- lift (newName "src")
      alts <- forM cons $ \(cn, fts) -> do
        fs <- mapM walkT fts
        xs <- lift (replicateM (length fs) (newName "x"))
        body <- lift (rebuild src (foldl AppE (ConE cn)) (zip fs xs))
        pure (Match (ConP cn (map VarP xs)) (NormalB body) [])
      x <- lift (newName "x")
      modify (\(m, ds) -> (m, FunD fn [Clause [VarP x, VarP src] (NormalB (CaseE (VarE x) alts)) []] : ds))
      pure (VarE fn)

-- | The fill walk of a type (a @Fill a@) and the local declarations it
-- uses (one function per data type, so recursive types work).
fillWalk :: Type -> Q (Exp, [Dec])
fillWalk ty = do
  (e, (_, ds)) <- runStateT (walkF ty) (M.empty, [])
  pure (e, ds)

-- | The fill walk: a new input's scalars into a buffer, its discrete
-- parts compared with the recorded input's.
walkF :: Type -> F Exp
walkF = walkWith Walk
  { wLeaf = leaf
  , wDouble = 'fillD, wVec = 'fillVec, wMat = 'fillMat
  , wDoubles = 'fillDoubles, wList = 'fillList
  , wTuple = fillTuple
  , wData = dataF
  }

-- | A tuple's fill, given its fields': field by field.
fillTuple :: [Exp] -> Q Exp
fillTuple fs = do
  xs <- replicateM (length fs) (newName "x")
  ys <- replicateM (length fs) (newName "y")
  b <- newName "b"
  k0 <- newName "k"
  body <- steps b k0 (zip3 fs xs ys)
  pure (LamE [TupP (map VarP xs), TupP (map VarP ys), VarP b, VarP k0] body)

-- | A part without a dual inside: a 'Constant''s data, or a discrete part.
-- The Doubles of data by their bits, which the tape holds: through lists
-- and tuples (what a 'Constant' holds), arrays by one memcmp
-- ('fillVecData'); a list the last call's very object at once
-- ('fillSame').  A part without a Double inside with '==' ('fillLeaf').
-- A tuple field by field: a call that builds a new tuple of the same data
-- (@Constant (xs, ys)@ written at the call) finds each field the last
-- call's object.
leaf :: Type -> F Exp
leaf ty0 = do
  ty <- lift (expandSyn ty0)
  case typeSpine ty of
    (TupleT k, as) | k > 1 && length as == k -> mapM leaf as >>= lift . fillTuple
    (ConT c, [a]) | c == ''Constant -> AppE (VarE 'fillConstant) <$> leaf a
    (ConT c, []) | c == ''Vec -> pure (VarE 'fillVecData)
                 | c == ''Mat -> pure (VarE 'fillMatData)
                 | c == ''Double -> pure (VarE 'fillDoubleBits)
    (ListT, [a]) -> do
      a' <- lift (expandSyn a)
      -- (recover: needsDual refuses a Float, which == compares here)
      holds <- lift (recover (pure False) (needsDual (TyEnv S.empty M.empty M.empty) a'))
      if a' == ConT ''Double
        then pure (VarE 'fillDoublesBits)
        else if holds
          then AppE (VarE 'fillSame) . AppE (VarE 'fillList) <$> leaf a'
          else eqLeaf ty
    _ -> eqLeaf ty

eqLeaf :: Type -> F Exp
eqLeaf ty = do
  eq <- lift (isInstance ''Eq [ty])
  if eq
    then pure (SigE (VarE 'fillLeaf) (AppT (ConT ''Fill) ty))
    else lift (fail ("dualrev: tapedGrad needs an Eq instance for " ++ pprint ty
                     ++ ", a part of the input without a Double inside (it tells a new input's "
                     ++ "discrete parts from the recorded one's): derive Eq for it, or use grad"))

dataF :: Type -> Name -> [Type] -> F Exp
dataF ty tn args = do
  (memo, _) <- get
  case M.lookup ty memo of
    Just fn -> pure (VarE fn)
    Nothing -> do
      fn <- lift (newName ("_fill_" ++ nameBase tn))
      modify (\(m, ds) -> (M.insert ty fn m, ds))
      cons <- lift (consOf "tapedGrad" ty tn args)
      alts <- forM cons $ \(cn, fts) -> do
        fs <- mapM walkF fts
        lift $ do
          xs <- replicateM (length fs) (newName "x")
          ys <- replicateM (length fs) (newName "y")
          b <- newName "b"
          k <- newName "k"
          body <- steps b k (zip3 fs xs ys)
          pure (Match (TupP [ConP cn (map VarP xs), ConP cn (map VarP ys)])
                      (NormalB (LamE [VarP b, VarP k] body)) [])
      x0 <- lift (newName "x0")
      x <- lift (newName "x")
      let other = [Match WildP (NormalB (LamE [WildP, WildP] (AppE (VarE 'pure) (LitE (IntegerL (-1)))))) []
                  | length cons > 1]
          body = CaseE (TupE [Just (VarE x0), Just (VarE x)]) (alts ++ other)
      modify (\(m, ds) -> (m, FunD fn [Clause [VarP x0, VarP x] (NormalB body) []] : ds))
      pure (VarE fn)

-- | The fields one after the other, each from the index the previous one
-- left: f1 x1 y1 b k >>= \k1 -> f2 x2 y2 b k1 >>= ... >>= pure.
steps :: Name -> Name -> [(Exp, Name, Name)] -> Q Exp
steps b = go
  where
    go kv [] = pure (AppE (VarE 'pure) (VarE kv))
    go kv ((f, x, y) : rest) = do
      kv' <- newName "k"
      rest' <- go kv' rest
      pure (InfixE (Just (foldl AppE f [VarE x, VarE y, VarE b, VarE kv])) (VarE '(>>=))
                   (Just (LamE [VarP kv'] rest')))
