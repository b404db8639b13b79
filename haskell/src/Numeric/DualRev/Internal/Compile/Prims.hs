{-# LANGUAGE TemplateHaskell #-}
{-# OPTIONS_HADDOCK hide #-}
-- | Internal, not a stable API: part of the Template Haskell front end,
-- which GHC runs at compile time.
--
-- What each supported Prelude name becomes in transformed code.
module Numeric.DualRev.Internal.Compile.Prims
  ( Prim (..)
  , lookupPrim
  , fusedPrim
  , fusedPrimWith
  , selectPrim
  , refusedPrim
  ) where

import Control.Applicative (liftA2, (<|>))
import Control.Monad
  ( foldM, foldM_, forM, forM_, guard, join, liftM2, mplus, msum, mzero, replicateM
  , replicateM_, unless, when, zipWithM, zipWithM_, (<=<), (>=>) )
import Data.Either (fromLeft, fromRight, isLeft, isRight, lefts, partitionEithers, rights)
import Data.Foldable (foldl', foldr', toList)
import Data.Function (on, (&))
import Data.Functor (($>), (<&>))
import Data.List
  ( (\\), delete, dropWhileEnd, elemIndex, find, findIndex, foldl1', genericLength, group
  , groupBy, inits, insert, insertBy, intercalate, intersect, intersperse, isInfixOf
  , isPrefixOf, isSuffixOf, iterate', mapAccumL, mapAccumR, maximumBy, minimumBy, nub, nubBy
  , partition, scanl', sort, sortBy, sortOn, tails, transpose, unfoldr, union )
import qualified Data.Map as M
import Data.Maybe (catMaybes, fromJust, fromMaybe, isJust, isNothing, listToMaybe, mapMaybe, maybeToList)
import Data.Ord (comparing)
import Data.Traversable (for)
import Data.Tuple (swap)
import Language.Haskell.TH
import Numeric (expm1, log1p)

import qualified Numeric.DualRev.Array as A
import qualified Numeric.DualRev.Internal.Run.Array.Dual as AD
import qualified Numeric.DualRev.Internal.Run.Array.Storable as S
import Numeric.DualRev.Internal.Run.Driver.Constant (constant, constantD)
import qualified Numeric.DualRev.Internal.Run.Scalar.FunctionDuals as FD
import qualified Numeric.DualRev.Internal.Run.Scalar.Functions as F
import Numeric.DualRev.Internal.Run.Control.Checkpoint
import Numeric.DualRev.Internal.Run.Library.Lazy (iterateD, unfoldrD)
import Numeric.DualRev.Internal.Run.Library.Containers
import Numeric.DualRev.Internal.Run.Library.Lists
import Numeric.DualRev.Internal.Run.Library.Monads
import qualified Numeric.DualRev.Internal.Run.Control.Nested as N
import Numeric.DualRev.Internal.Run.Control.Pair ((|*|))
import Numeric.DualRev.Internal.Run.Scalar.Ops
import Numeric.DualRev.Internal.Compile.ArrayPrims (arrayPrims)
import Numeric.DualRev.Internal.Engine.ScalarTable (functionPrims)

data Prim
  = PMon Name Int   -- ^ a function of that arity returning @AD r@
  | PPure Name Int  -- ^ a pure function of that arity (0: a plain value)
  | PAnd            -- ^ (&&), short-circuiting
  | POr             -- ^ (||), short-circuiting
  | PErr            -- ^ error: raise when reached
  | PPar            -- ^ (|*|): the two sides as parallel jobs

lookupPrim :: Name -> Maybe Prim
lookupPrim n = M.lookup n table

-- | An application of one primitive to the result of another that runs as
-- one loop: keyed by the two duals (outer, inner), the fused dual, which
-- takes the inner one's arguments.  @sum (zipWith (*) xs ys)@ then sums as
-- it multiplies, with no list of products in between.
fusedPrim :: Name -> Name -> Maybe Name
fusedPrim outer inner = lookup (outer, inner)
  [ (('sumFD, 'mapD), 'sumMapD)
  , (('sumFD, 'zipWithD), 'sumZipWithD) ]

-- | The same for an inner primitive whose first argument is itself a
-- primitive (outer, inner, function): the fused dual takes the inner one's
-- other arguments.  @sum (zipWith (*) xs ys)@ is then one statement (one
-- tape node for the whole sum) where the dual scalar is concerned.
fusedPrimWith :: Name -> Name -> Name -> Maybe Name
fusedPrimWith outer inner fn = lookup (outer, inner, fn)
  [ (('sumFD, 'zipWithD, 'timesD), 'sumZipWithTimesD) ]

-- | 'minimum' or 'maximum' (outer) of a list that 'map' or 'concatMap' (a
-- list comprehension) computes: the dual that takes the inner one's
-- arguments and keeps only the winning element's nodes ('SelectD').
selectPrim :: Name -> Name -> Maybe Name
selectPrim outer inner = lookup (outer, inner)
  [ (('minimum, 'concatMapD), 'minimumConcatMapD)
  , (('maximum, 'concatMapD), 'maximumConcatMapD)
  , (('minimum, 'mapD), 'minimumMapD)
  , (('maximum, 'mapD), 'maximumMapD) ]

-- | Library functions that differentiable code cannot use, with the reason.
-- Without this they would be taken for monomorphic code from outside any
-- block, and the message would advise moving them into one.
refusedPrim :: Name -> Maybe String
refusedPrim n = M.lookup n refused

refused :: M.Map Name String
refused = M.fromList
  [ (n, "`" ++ nameBase n ++ "': the conversions between Vec or Mat and Data.Vector.Storable "
        ++ "work in ordinary code only; convert outside the block and pass the Vec or Mat in")
  | n <- ['S.vecFromStorable, 'S.vecToStorable, 'S.matFromStorable, 'S.matToStorable] ]

table :: M.Map Name Prim
table = M.fromList $
  -- Numeric.DualRev.Array: one tape node per operation; the primitives'
  -- rows follow from their declarations in the C header, these are the
  -- functions made of them
  [ (n, PMon d k) | (n, d, k) <- arrayPrims ] ++
  [
    ('A.vfromList, PMon 'AD.fromListD 1),
    ('A.vtoList, PMon 'AD.toListD 1),
    ('A.vlength, PMon 'AD.vlengthD 1),
    ('A.vneg, PMon 'AD.vnegD 1),
    ('A.vabs, PMon 'AD.vabsD 1),
    ('A.vsqrt, PMon 'AD.vsqrtD 1),
    ('A.vexp, PMon 'AD.vexpD 1),
    ('A.vlog, PMon 'AD.vlogD 1),
    ('A.vsin, PMon 'AD.vsinD 1),
    ('A.vcos, PMon 'AD.vcosD 1),
    ('A.vtanh, PMon 'AD.vtanhD 1),
    ('A.vsigmoid, PMon 'AD.vsigmoidD 1),
    ('A.vrelu, PMon 'AD.vreluD 1),
    ('A.vsquare, PMon 'AD.vsquareD 1),
    ('A.vconcat, PMon 'AD.vconcatD 1),
    ('A.fromRows, PMon 'AD.fromRowsD 1),
    ('A.toRows, PMon 'AD.toRowsD 1),
    ('A.mrows, PMon 'AD.rowsD 1),
    ('A.mcols, PMon 'AD.colsD 1),
    ('A.mneg, PMon 'AD.mnegD 1),
    ('A.mabs, PMon 'AD.mabsD 1),
    ('A.msqrt, PMon 'AD.msqrtD 1),
    ('A.mexp, PMon 'AD.mexpD 1),
    ('A.mlog, PMon 'AD.mlogD 1),
    ('A.msin, PMon 'AD.msinD 1),
    ('A.mcos, PMon 'AD.mcosD 1),
    ('A.mtanh, PMon 'AD.mtanhD 1),
    ('A.msigmoid, PMon 'AD.msigmoidD 1),
    ('A.mrelu, PMon 'AD.mreluD 1),
    ('A.msquare, PMon 'AD.msquareD 1),
    ('A.matMul, PMon 'AD.matMulD 2),
    ('A.reshape, PMon 'AD.reshapeD 3),
    ('A.mflatten, PMon 'AD.flattenD 1),
    ('A.vstack, PMon 'AD.vstackD 1),
    ('A.hstack, PMon 'AD.hstackD 1)
  ] ++
  -- Num, Fractional, Floating, RealFloat: recorded on the tape for Double
  [ ('(+), PMon 'plusD 2), ('(-), PMon 'minusD 2), ('(*), PMon 'timesD 2)
  , ('subtract, PMon 'subtractD 2), ('negate, PMon 'negateD 1)
  , ('abs, PMon 'absD 1), ('signum, PMon 'signumD 1)
  , ('(/), PMon 'divD 2), ('recip, PMon 'recipD 1)
  , ('(^), PMon 'powIntD 2), ('(^^), PMon 'powIntFracD 2)
  , ('exp, PMon 'expD 1), ('log, PMon 'logD 1), ('sqrt, PMon 'sqrtD 1)
  , ('sin, PMon 'sinD 1), ('cos, PMon 'cosD 1), ('tan, PMon 'tanD 1)
  , ('asin, PMon 'asinD 1), ('acos, PMon 'acosD 1), ('atan, PMon 'atanD 1)
  , ('sinh, PMon 'sinhD 1), ('cosh, PMon 'coshD 1), ('tanh, PMon 'tanhD 1)
  , ('asinh, PMon 'asinhD 1), ('acosh, PMon 'acoshD 1), ('atanh, PMon 'atanhD 1)
  , ('log1p, PMon 'log1pD 1), ('expm1, PMon 'expm1D 1)
  , ('(**), PMon 'powD 2), ('logBase, PMon 'logBaseD 2), ('atan2, PMon 'atan2D 2)
  , ('sum, PMon 'sumFD 1), ('product, PMon 'productFD 1)
  , ('realToFrac, PPure 'realToFracD 1)
  , ('pi, PPure 'pi 0)
  -- higher-order functions: dual versions taking dual functions
  , ('N.derivative, PMon 'N.derivativeD 2), ('N.gradient, PMon 'N.gradientD 2)
  , ('N.derivative', PMon 'N.derivativeD' 2), ('N.gradient', PMon 'N.gradientD' 2)
  , ('N.jacobianOf, PMon 'N.jacobianOfD 2), ('N.hessianOf, PMon 'N.hessianOfD 2)
  , ('map, PMon 'mapD 2), ('zipWith, PMon 'zipWithD 3), ('zipWith3, PMon 'zipWith3D 4)
  , ('foldr, PMon 'foldrD 3), ('foldr', PMon 'foldrD 3), ('foldl, PMon 'foldlD 3)
  , ('foldl', PMon 'foldlD' 3), ('foldr1, PMon 'foldr1D 2), ('foldl1, PMon 'foldl1D 2)
  , ('foldl1', PMon 'foldl1D 2), ('concatMap, PMon 'concatMapD 2)
  , ('iterate, PMon 'iterateD 2), ('iterate', PMon 'iterateD 2), ('unfoldr, PMon 'unfoldrD 2)
  , ('checkpointedIterate, PMon 'checkpointedIterateD 3)
  , ('checkpointedIterateWith, PMon 'checkpointedIterateWithD 4)
  , ('filter, PMon 'filterD 2), ('takeWhile, PMon 'takeWhileD 2)
  , ('dropWhile, PMon 'dropWhileD 2), ('dropWhileEnd, PMon 'dropWhileEndD 2)
  , ('any, PMon 'anyD 2), ('all, PMon 'allD 2)
  , ('scanl, PMon 'scanlD 3), ('scanl', PMon 'scanlD 3), ('scanr, PMon 'scanrD 3)
  , ('scanl1, PMon 'scanl1D 2), ('scanr1, PMon 'scanr1D 2)
  , ('span, PMon 'spanD 2), ('break, PMon 'breakD 2), ('partition, PMon 'partitionD 2)
  , ('find, PMon 'findD 2), ('findIndex, PMon 'findIndexD 2), ('until, PMon 'untilD 3)
  , ('mapMaybe, PMon 'mapMaybeD 2)
  , ('sortBy, PMon 'sortByD 2), ('sortOn, PMon 'sortOnD 2), ('insertBy, PMon 'insertByD 3)
  , ('maximumBy, PMon 'maximumByD 2), ('minimumBy, PMon 'minimumByD 2)
  , ('groupBy, PMon 'groupByD 2), ('nubBy, PMon 'nubByD 2)
  , ('mapAccumL, PMon 'mapAccumLD 3), ('mapAccumR, PMon 'mapAccumRD 3)
  , ('flip, PMon 'flipD 3), ('curry, PMon 'curryD 3), ('uncurry, PMon 'uncurryD 2)
  , ('maybe, PMon 'maybeD 3), ('either, PMon 'eitherD 3)
  , ('(.), PMon 'composeD 3), ('($), PMon 'applyD 2), ('($!), PMon 'applyD 2)
  , ('(&), PMon 'ampD 2), ('on, PMon 'onD 4), ('comparing, PMon 'comparingD 3)
  -- Functor, Applicative, Monad, Traversable: on lists, Maybe, Either, pairs
  , ('fmap, PMon 'fmapD 2), ('(<$>), PMon 'fmapD 2), ('(<&>), PMon 'fmapFlippedD 2)
  , ('traverse, PMon 'traverseD 2), ('mapM, PMon 'traverseD 2)
  , ('for, PMon 'forD 2), ('forM, PMon 'forD 2)
  , ('(|*|), PPar), ('constant, PMon 'constantD 1)
  , ('(&&), PAnd), ('(||), POr), ('error, PErr), ('errorWithoutStackTrace, PErr)
  ] ++
  -- monads (Maybe, Either e, lists, Identity): what takes a continuation
  -- or a function into the monad binds through DMonad; patFailD is where a
  -- desugared do statement goes when its pattern does not match
  [ ('(>>=), PMon 'bindD 2), ('(=<<), PMon 'bindFlipD 2), ('patFailD, PMon 'patFailD 1)
  , ('(>=>), PMon 'kleisliD 3), ('(<=<), PMon 'kleisliFlipD 3)
  , ('(<*>), PMon 'apD 2), ('liftA2, PMon 'liftA2D 3), ('liftM2, PMon 'liftA2D 3)
  , ('mapM_, PMon 'mapMD_ 2)
  , ('forM_, PMon 'forMD_ 2), ('foldM, PMon 'foldMD 3), ('foldM_, PMon 'foldMD_ 3)
  , ('zipWithM, PMon 'zipWithMD 3), ('zipWithM_, PMon 'zipWithMD_ 3)
  ] ++
  [ (n, PPure n k) | (n, k) <-
    [ ('return, 1), ('pure, 1), ('(>>), 2), ('(*>), 2), ('(<*), 2), ('fail, 1)
    , ('guard, 1), ('when, 2), ('unless, 2), ('sequence, 1), ('sequence_, 1)
    , ('replicateM, 2), ('replicateM_, 2), ('join, 1), ('mzero, 0), ('mplus, 2)
    , ('msum, 1), ('(<|>), 2)
    ] ] ++
  -- pure: structural list functions, comparisons (on values), discrete maths
  [ (n, PPure n k) | (n, k) <-
    [ ('zip, 2), ('zip3, 3), ('unzip, 1), ('unzip3, 1), ('length, 1), ('null, 1)
    , ('head, 1), ('tail, 1), ('last, 1), ('init, 1), ('(!!), 2), ('take, 2)
    , ('drop, 2), ('splitAt, 2), ('replicate, 2), ('reverse, 1), ('(++), 2)
    , ('concat, 1), ('and, 1), ('or, 1), ('elem, 2), ('notElem, 2), ('lookup, 2)
    , ('fst, 1), ('snd, 1), ('id, 1), ('const, 2), ('maximum, 1), ('minimum, 1)
    , ('not, 1), ('otherwise, 0), ('(==), 2), ('(/=), 2), ('(<), 2), ('(<=), 2)
    , ('(>), 2), ('(>=), 2), ('compare, 2), ('max, 2), ('min, 2)
    , ('div, 2), ('mod, 2), ('quot, 2), ('rem, 2), ('divMod, 2), ('quotRem, 2)
    , ('even, 1), ('odd, 1), ('gcd, 2), ('lcm, 2), ('fromIntegral, 1)
    , ('fromEnum, 1), ('toEnum, 1), ('succ, 1), ('pred, 1), ('truncate, 1)
    , ('round, 1), ('floor, 1), ('ceiling, 1), ('isNaN, 1), ('isInfinite, 1)
    , ('fromInteger, 1), ('toInteger, 1), ('seq, 2), ('undefined, 0)
    , ('words, 1), ('unwords, 1), ('lines, 1), ('unlines, 1)
    , ('cycle, 1), ('repeat, 1), ('swap, 1), ('toList, 1)
    -- Data.List; the comparisons look at values, as everywhere
    , ('sort, 1), ('insert, 2), ('transpose, 1), ('group, 1), ('nub, 1), ('tails, 1)
    , ('inits, 1), ('intercalate, 2), ('intersperse, 2), ('isPrefixOf, 2)
    , ('isSuffixOf, 2), ('isInfixOf, 2), ('elemIndex, 2), ('delete, 2), ('(\\), 2)
    , ('union, 2), ('intersect, 2)
    -- Data.Maybe, Data.Either
    , ('fromMaybe, 2), ('catMaybes, 1), ('isJust, 1), ('isNothing, 1), ('fromJust, 1)
    , ('listToMaybe, 1), ('maybeToList, 1), ('lefts, 1), ('rights, 1)
    , ('partitionEithers, 1), ('isLeft, 1), ('isRight, 1), ('fromLeft, 2), ('fromRight, 2)
    -- structural Functor, Applicative, Traversable methods
    , ('(<$), 2), ('($>), 2), ('sequenceA, 1)
    ] ] ++
  [ ('genericLength, PPure 'genericLengthD 1) ] ++
  -- Numeric.DualRev.Functions: one row per function, from the engine's table
  $(functionPrims)

