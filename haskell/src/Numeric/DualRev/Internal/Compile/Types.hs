{-# LANGUAGE TemplateHaskell #-}
{-# OPTIONS_HADDOCK hide #-}
-- | Internal, not a stable API: part of the Template Haskell front end,
-- which GHC runs at compile time.
--
-- The transformation of types: @Double@ becomes the dual scalar, a function
-- type becomes a Kleisli arrow of the forward-pass monad per argument, data
-- types with @Double@ (or function) fields get a dual twin, everything else is
-- mapped structurally.  Also the naming scheme of dual definitions.
module Numeric.DualRev.Internal.Compile.Types
  ( TyEnv (..)
  , dualValName, dualWorkerName, dualConName, dualTyName
  , externalDual
  , needsDual
  , blockDualTypes
  , outsideTypes
  , typeRefs
  , typeSpine
  , declName
  , transType
  , transPred
  , dualDataDec
  , arrowArity
  , conArity
  , conFields
  ) where

import Control.Monad (filterM)
import Data.Data (Data, cast, gmapQ)
import Data.Char (isAlpha, isUpper, ord)
import qualified Data.Map as M
import qualified Data.Set as S
import Language.Haskell.TH
import Language.Haskell.TH.Syntax (Name (..), NameFlavour (..))

import Numeric.DualRev.Internal.Compile.Registry (reifyR, reifyTypeR)
import Numeric.DualRev.Internal.Run.Scalar.AD (AD, D)
import Numeric.DualRev.Internal.Run.Array.Data (DMat, DVec, Mat, Vec)
import Numeric.DualRev.Internal.Run.Driver.Constant (Constant)
import Numeric.DualRev.Internal.Run.Library.Lazy (DEnumFrom)
import Numeric.DualRev.Internal.Run.Library.Monads (DMonad)
import Numeric.DualRev.Internal.Run.Scalar.Ops

-- | Types of the current block: all of them, and the dual names of those
-- that need a dual twin.
data TyEnv = TyEnv
  { tyBlock :: S.Set Name
  , tyDuals :: M.Map Name Name
  , tyClasses :: M.Map Name Name  -- ^ classes of the block: their dual classes
  }

encode :: String -> String
encode s
  | all (\c -> isAlpha c || c `elem` "_'0123456789") s = s
  | otherwise = "op" ++ concatMap (\c -> '\'' : show (ord c)) s

-- | @f@ becomes @f'dr@ (its dual, a value of the transformed type), and
-- @f'drw@ (the worker taking all its arguments at once).
dualValName, dualWorkerName, dualConName, dualTyName :: Name -> Name
dualValName n = mkName (lowerFirst (encode (nameBase n)) ++ "'dr")
dualWorkerName n = mkName (lowerFirst (encode (nameBase n)) ++ "'drw")
dualConName n = mkName (upperFirst (encode (nameBase n)) ++ "'dr")
dualTyName = dualConName

lowerFirst, upperFirst :: String -> String
lowerFirst s@(c : _) | isUpper c || c == '_' = s
lowerFirst s@('o' : 'p' : '\'' : _) = "dualrev'" ++ s
lowerFirst s = s
upperFirst s@(c : _) | isUpper c = s
upperFirst s = "Dualrev'" ++ s

-- | The dual of a name defined elsewhere (same module, suffixed), if that
-- module defines it.
--
-- A type declared outside any block gets its twin in the first block of a
-- module that uses it, so the twin is also looked for in this module.
externalDual :: (Name -> Name) -> Name -> Q (Maybe Name)
externalDual mk n = case n of
  Name _ (NameG ns pkg m) -> do
    let Name occ _ = mk n
    there <- probe (Name occ (NameG ns pkg m))
    maybe (probe (mk n)) (pure . Just) there
  _ -> probe (mk n)
  where
    probe d = recover (pure Nothing) (reifyR d >> pure (Just d))

-- | Does a type mention Double or a function type (so its values hold
-- something the tape must see)?
needsDual :: TyEnv -> Type -> Q Bool
needsDual env = go S.empty
  where
    go seen ty = case ty of
      ConT n
        | n == ''Double -> pure True
        | n == ''Float -> fail "dualrev: Float is not supported in differentiable code; use Double"
        | n == ''Vec || n == ''Mat -> pure True
        | M.member n (tyDuals env) -> pure True
        | S.member n (tyBlock env) -> pure False
        | S.member n seen -> pure False
        | otherwise -> external (S.insert n seen) n
      ArrowT -> pure True
      AppT (ConT c) _ | c == ''Constant -> pure False
      AppT a b -> (||) <$> go seen a <*> go seen b
      ForallT _ _ t -> go seen t
      SigT t _ -> go seen t
      ParensT t -> go seen t
      _ -> pure False
    external seen n = do
      info <- recover (pure Nothing) (Just <$> reifyTypeR n)
      case info of
        Just (TyConI d) -> case d of
          DataD _ _ _ _ cons _ -> anyM (go seen) (concatMap conFieldTypes cons)
          NewtypeD _ _ _ _ con _ -> anyM (go seen) (conFieldTypes con)
          TySynD _ _ rhs -> go seen rhs
          _ -> pure False
        _ -> pure False

anyM :: (a -> Q Bool) -> [a] -> Q Bool
anyM _ [] = pure False
anyM p (x : xs) = p x >>= \b -> if b then pure True else anyM p xs

conFieldTypes :: Con -> [Type]
conFieldTypes c = case c of
  NormalC _ fs -> map snd fs
  RecC _ fs -> [t | (_, _, t) <- fs]
  InfixC (_, a) _ (_, b) -> [a, b]
  ForallC _ _ c' -> conFieldTypes c'
  GadtC _ fs _ -> map snd fs
  RecGadtC _ fs _ -> [t | (_, _, t) <- fs]

-- | The declarations of the data types declared outside any block that the
-- block uses (in a type, or by a constructor) and that need a dual twin no
-- block has made yet, with those their fields need in turn.
outsideTypes :: [Dec] -> Q [Dec]
outsideTypes decs = go S.empty [] (S.toList (typeRefs decs))
  where
    inBlock = S.fromList [n | d <- decs, Just n <- [declName d]]
    go _ acc [] = pure (reverse acc)
    go seen acc (n : rest)
      | S.member n seen || S.member n inBlock || n `elem` [''Double, ''Vec, ''Mat, ''Constant] =
          go seen acc rest
      | otherwise = do
          let seen' = S.insert n seen
          info <- recover (pure Nothing) (Just <$> reify n)
          case info of
            Just (DataConI _ _ parent) -> go seen' acc (parent : rest)
            Just (TyConI d) | isData d -> do
              nd <- needsDual (TyEnv inBlock M.empty M.empty) (ConT n)
              twin <- externalDual dualTyName n
              if nd && twin == Nothing
                then go seen' (d : acc) (S.toList (typeRefs [d]) ++ rest)
                else go seen' acc rest
            _ -> go seen' acc rest
    isData d = case d of { DataD {} -> True; NewtypeD {} -> True; _ -> False }

declName :: Dec -> Maybe Name
declName d = case d of
  DataD _ n _ _ _ _ -> Just n
  NewtypeD _ n _ _ _ _ -> Just n
  TySynD n _ _ -> Just n
  ClassD _ n _ _ _ -> Just n
  _ -> Nothing

-- | Type constructors a declaration mentions, and the parent types of the
-- data constructors it uses.
typeRefs :: [Dec] -> S.Set Name
typeRefs ds = S.fromList (everything ds)
  where
    everything :: Data x => x -> [Name]
    everything x = here x ++ concat (gmapQ everything x)
    here :: Data x => x -> [Name]
    here x = case cast x of
      Just (ConT n) -> [n]
      _ -> case cast x of
        Just (ConE c) -> [c]
        Just (RecConE c _) -> [c]
        _ -> case cast x of
          Just (ConP c _) -> [c]
          Just (RecP c _) -> [c]
          Just (InfixP _ c _) -> [c]
          _ -> []

-- | Which of the block's data types and synonyms need dual twins (a fixed
-- point: a type needs one if a field mentions a type that does).  The
-- declarations include those of 'outsideTypes', whose twins the block makes.
blockDualTypes :: [Dec] -> Q TyEnv
blockDualTypes decs = loop (TyEnv names M.empty classes)
  where
    names = S.fromList (map fst defs)
    classes = M.fromList [(n, dualTyName n) | ClassD _ n _ _ _ <- decs]
    defs = [(n, fields) | d <- decs, Just (n, fields) <- [typeDef d]]
    typeDef d = case d of
      DataD _ n _ _ cons _ -> Just (n, concatMap conFieldTypes cons)
      NewtypeD _ n _ _ con _ -> Just (n, conFieldTypes con)
      TySynD n _ rhs -> Just (n, [rhs])
      _ -> Nothing
    loop env = do
      new <- filterM (\(n, fs) -> if M.member n (tyDuals env) then pure False
                                  else anyM (needsDual env) fs) defs
      if null new
        then pure env
        else loop env { tyDuals = foldr (\(n, _) -> M.insert n (dualTyName n)) (tyDuals env) new }

-- | The transformed type.
transType :: TyEnv -> Type -> Q Type
transType env ty = case ty of
  AppT (ConT c) _ | c == ''Constant -> pure ty
  AppT (AppT ArrowT a) b -> do
    a' <- transType env a
    b' <- transType env b
    pure (AppT (AppT ArrowT a') (AppT (ConT ''AD) b'))
  ConT n
    | n == ''Double -> pure (ConT ''D)
    | n == ''Vec -> pure (ConT ''DVec)
    | n == ''Mat -> pure (ConT ''DMat)
    | Just d <- M.lookup n (tyDuals env) -> pure (ConT d)
    | S.member n (tyBlock env) -> pure ty
    | otherwise -> do
        nd <- needsDual env ty
        if not nd then pure ty else do
          syn <- recover (pure Nothing) $ do
            i <- reifyTypeR n
            pure $ case i of { TyConI (TySynD _ [] rhs) -> Just rhs; _ -> Nothing }
          case syn of
            Just rhs -> transType env rhs
            Nothing -> do
              md <- externalDual dualTyName n
              case md of
                Just d -> pure (ConT d)
                Nothing -> fail $ "dualrev: the type `" ++ pprint n ++ "' holds Double values "
                  ++ "or functions but was not declared in a differentiable block"
  AppT a b -> AppT <$> transType env a <*> transType env b
  ForallT tvs ctx t -> ForallT tvs <$> (concat <$> mapM (transPred env) ctx) <*> transType env t
  SigT t k -> (`SigT` k) <$> transType env t
  ParensT t -> ParensT <$> transType env t
  _ -> pure ty

-- | Class constraints of user signatures, in terms of the dual classes
-- (the standard class is kept where literals or pure methods need it).  A
-- class declared in a block becomes its dual class.
transPred :: TyEnv -> Pred -> Q [Pred]
transPred env p = case typeSpine p of
  (ConT c, ts)
    | Just cs <- lookup c classMap -> pure [foldl AppT (ConT c') ts | c' <- cs]
    | Just c' <- M.lookup c (tyClasses env) -> pure [foldl AppT (ConT c') ts]
    | otherwise -> do
        md <- externalDual dualTyName c
        pure [maybe p (\c' -> foldl AppT (ConT c') ts) md]
  _ -> pure [p]
  where
    classMap =
      [ (''Num, [''Num, ''DNum])
      , (''Fractional, [''Fractional, ''DFractional])
      , (''Floating, [''Floating, ''DFloating])
      , (''RealFloat, [''RealFloat, ''DRealFloat])
      , (''RealFrac, [''RealFrac, ''DFractional])
      , (''Real, [''Real, ''DNum])
      , (''Integral, [''Integral, ''DNum])
      , (''Monad, [''Monad, ''DMonad])
      , (''Enum, [''DEnum, ''DEnumFrom])  -- arithmetic sequences; succ, pred, fromEnum on Double are not supported
      ]

-- | A type applied to its arguments: @T a b@ as (@T@, [a, b]).
typeSpine :: Type -> (Type, [Type])
typeSpine = go []
  where
    go acc (AppT f x) = go (x : acc) f
    go acc f = (f, acc)

-- | The dual twin of a data type, newtype or synonym of the block.
dualDataDec :: TyEnv -> Dec -> Q [Dec]
dualDataDec env d = case d of
  DataD _ n tvs k cons ders | Just n' <- M.lookup n (tyDuals env) -> do
    cons' <- mapM dualCon cons
    pure [DataD [] n' tvs k cons' (dualDerivs ders)]
  NewtypeD _ n tvs k con ders | Just n' <- M.lookup n (tyDuals env) -> do
    con' <- dualCon con
    pure [NewtypeD [] n' tvs k con' (dualDerivs ders)]
  TySynD n tvs rhs | Just n' <- M.lookup n (tyDuals env) -> do
    rhs' <- transType env rhs
    pure [TySynD n' tvs rhs']
  _ -> pure []
  where
    field t = transType env t
    -- derived Eq, Ord and Show carry over (on D they look at values, as
    -- comparisons in differentiable code do); other derived classes do not
    dualDerivs ders = [ DerivClause st ps' | DerivClause st ps <- ders
                      , let ps' = [p | p@(ConT c) <- ps, c `elem` [''Eq, ''Ord, ''Show]]
                      , not (null ps') ]
    dualCon c = case c of
      NormalC cn fs -> NormalC (dualConName cn) <$> mapM (\(b, t) -> (,) b <$> field t) fs
      RecC cn fs -> RecC (dualConName cn) <$> mapM (\(f, b, t) -> (,,) (dualValName f) b <$> field t) fs
      InfixC (b1, t1) cn (b2, t2) -> do
        t1' <- field t1
        t2' <- field t2
        pure (NormalC (dualConName cn) [(b1, t1'), (b2, t2')])
      _ -> fail ("dualrev: unsupported constructor form in a differentiable block: " ++ pprint c)

-- | Number of arrows before the result (for worker types: before @AD r@).
arrowArity :: Type -> Int
arrowArity ty = case ty of
  ForallT _ _ t -> arrowArity t
  AppT (AppT ArrowT _) r -> 1 + arrowArity r
  -- GHC 9 reifies data constructors with linear arrows (a %1 -> b)
  AppT (AppT (AppT MulArrowT _) _) r -> 1 + arrowArity r
  _ -> 0

-- | Arity of a constructor from reify.
conArity :: Name -> Q Int
conArity c = do
  i <- reifyR c
  case i of
    DataConI _ t _ -> pure (arrowArity t)
    _ -> fail ("dualrev: not a data constructor: " ++ pprint c)

-- | A constructor's name and field types.
conFields :: Con -> Q (Name, [Type])
conFields c = case c of
  NormalC n fs -> pure (n, map snd fs)
  RecC n fs -> pure (n, [t | (_, _, t) <- fs])
  InfixC (_, a) n (_, b) -> pure (n, [a, b])
  _ -> fail ("dualrev: unsupported constructor form: " ++ pprint c)
