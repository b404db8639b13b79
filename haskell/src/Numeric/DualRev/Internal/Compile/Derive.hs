{-# LANGUAGE TemplateHaskell #-}
{-# OPTIONS_HADDOCK hide #-}
-- | Internal, not a stable API: part of the Template Haskell front end,
-- which GHC runs at compile time.
--
-- Traversable for the data types of a block that derive Functor.  A dual
-- function returns @AD b@, so 'fmap' with one in differentiable code is a
-- traverse in the tape monad: a type whose users write @deriving Functor@
-- needs 'Foldable' and 'Traversable' too (for itself, or for its dual twin,
-- which cannot derive them without the user's language extensions).
module Numeric.DualRev.Internal.Compile.Derive
  ( traversableInstances
  , forceInstance
  ) where

import Control.Monad (forM, replicateM)
import Data.Traversable (fmapDefault, foldMapDefault)
import Language.Haskell.TH

import Numeric.DualRev.Internal.Run.Driver.Current (Force (..))

-- | Instances of the classes among Functor, Foldable, Traversable that the
-- type lacks (the ones in @have@ exist), for the type constructor @tn@ with
-- parameters @tvs@ and constructors @cons@ (name and field types).
traversableInstances :: Name -> [TyVarBndr ()] -> [(Name, [Type])] -> [Name] -> Q [Dec]
traversableInstances tn tvs cons have
  | null tvs = pure []
  | otherwise = do
      let a = tvName (last tvs)
          headT = foldl AppT (ConT tn) (map (VarT . tvName) (init tvs))
          inst cls ds = InstanceD Nothing [] (AppT (ConT cls) headT) ds
      f <- newName "f"
      alts <- forM cons $ \(cn, fts) -> do
        xs <- replicateM (length fts) (newName "x")
        es <- forM (zip fts xs) $ \(t, x) -> field a f t x
        let built = foldl (\acc e -> InfixE (Just acc) (VarE '(<*>)) (Just e))
                          (AppE (VarE 'pure) (ConE cn)) es
        pure (Match (ConP cn (map VarP xs)) (NormalB built) [])
      v <- newName "v"
      let trav = FunD 'traverse [Clause [VarP f, VarP v] (NormalB (CaseE (VarE v) alts)) []]
      pure $ [inst ''Functor [ValD (VarP 'fmap) (NormalB (VarE 'fmapDefault)) []] | ''Functor `notElem` have]
          ++ [inst ''Foldable [ValD (VarP 'foldMap) (NormalB (VarE 'foldMapDefault)) []] | ''Foldable `notElem` have]
          ++ [inst ''Traversable [trav] | ''Traversable `notElem` have]
  where
    tvName (PlainTV n _) = n
    tvName (KindedTV n _ _) = n
    mentions a t = case t of
      VarT b -> a == b
      AppT p q -> mentions a p || mentions a q
      SigT p _ -> mentions a p
      ParensT p -> mentions a p
      _ -> False
    field a f t x
      | t == VarT a = pure (AppE (VarE f) (VarE x))
      | not (mentions a t) = pure (AppE (VarE 'pure) (VarE x))
      | AppT g (VarT b) <- t, b == a, not (mentions a g) =
          pure (AppE (AppE (VarE 'traverse) (VarE f)) (VarE x))
      | otherwise = fail ("dualrev: cannot derive Traversable for `" ++ nameBase tn
                          ++ "': the field type " ++ pprint t ++ " holds its parameter nested")

-- | 'Force' for a parametrised type of a block that is reused as is (its
-- parameter a dual number in differentiable code): every field forced, so
-- that a value such a type's methods return from outside the block (an
-- instance @Num a => Num (P a)@ is ordinary code) has recorded all its
-- arithmetic before the block goes on, not when a lazy field is read later.
forceInstance :: Name -> [TyVarBndr ()] -> [(Name, [Type])] -> Q [Dec]
forceInstance tn tvs cons
  | null tvs = pure []
  | otherwise = do
      v <- newName "v"
      alts <- forM cons $ \(cn, fts) -> do
        xs <- replicateM (length fts) (newName "x")
        let forced = foldr (\x rest -> InfixE (Just (AppE (VarE 'force) (VarE x))) (VarE '(>>)) (Just rest))
                           (AppE (VarE 'pure) (TupE [])) xs
        pure (Match (ConP cn (map VarP xs)) (NormalB forced) [])
      -- no context: a field of a parameter's type is forced by the
      -- general instance (a dual number to weak head normal form, which
      -- is its whole recording), a list of them element by element
      let headT = foldl AppT (ConT tn) (map VarT params)
          body = FunD 'force [Clause [VarP v] (NormalB (CaseE (VarE v) alts)) []]
      pure [InstanceD Nothing [] (AppT (ConT ''Force) headT) [body]]
  where
    params = map tvName tvs
    tvName (PlainTV n _) = n
    tvName (KindedTV n _ _) = n
