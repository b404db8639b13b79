{-# OPTIONS_HADDOCK hide #-}
-- | Internal, not a stable API: part of the Template Haskell front end,
-- which GHC runs at compile time.
--
-- What the differentiable blocks of the module being compiled declared.
--
-- GHC type-checks the output of a declaration splice together with the
-- declarations that follow it, so an expression splice such as
-- @$(grad 'f)@ right after @differentiable [d| f ... |]@ cannot 'reify' @f@
-- yet.  Each block therefore records its declarations (kept in the Q
-- monad's per-module state), and 'reifyR' falls back to them.
module Numeric.DualRev.Internal.Compile.Registry
  ( register
  , reifyR
  , reifyTypeR
  ) where

import qualified Data.Map as M
import Language.Haskell.TH
import Language.Haskell.TH.Syntax (getQ, putQ)

newtype Registry = Registry (M.Map String [Info])

register :: [Dec] -> Q ()
register ds = do
  Registry m <- maybe (Registry M.empty) id <$> getQ
  putQ (Registry (M.unionWith (++) (M.fromListWith (++) [(k, [i]) | (k, i) <- concatMap infos ds]) m))
  where
    infos d = case d of
      SigD n t -> [(nameBase n, VarI n t Nothing)]
      DataD _ n tvs _ cs _ -> (nameBase n, TyConI d) : concatMap (conInfo n tvs) cs
      NewtypeD _ n tvs _ c _ -> (nameBase n, TyConI d) : conInfo n tvs c
      TySynD n _ _ -> [(nameBase n, TyConI d)]
      _ -> []
    conInfo tn tvs c =
      let res = foldl AppT (ConT tn) [VarT (tvName tv) | tv <- tvs]
          mk cn fs = [(nameBase cn, DataConI cn (quantify tvs (foldr arrow res fs)) tn)]
      in case c of
        NormalC cn fs -> mk cn (map snd fs)
        RecC cn fs -> mk cn [t | (_, _, t) <- fs]
        InfixC (_, a) cn (_, b) -> mk cn [a, b]
        _ -> []
    arrow a b = AppT (AppT ArrowT a) b
    quantify [] t = t
    quantify tvs t = ForallT [PlainTV (tvName tv) SpecifiedSpec | tv <- tvs] [] t
    tvName (PlainTV n _) = n
    tvName (KindedTV n _ _) = n

-- | 'reify' a value or constructor, or what a block of this module declared
-- under that name.
reifyR :: Name -> Q Info
reifyR = reifyWith (not . isType)

-- | The same for a type constructor.
reifyTypeR :: Name -> Q Info
reifyTypeR = reifyWith isType

isType :: Info -> Bool
isType (TyConI _) = True
isType _ = False

reifyWith :: (Info -> Bool) -> Name -> Q Info
reifyWith ok n = recover fromRegistry (reify n)
  where
    fromRegistry = do
      here <- loc_module <$> location
      Registry m <- maybe (Registry M.empty) id <$> getQ
      case (nameModule n, filter ok (M.findWithDefault [] (nameBase n) m)) of
        (mm, i : _) | maybe True (== here) mm -> pure i
        _ -> reify n
