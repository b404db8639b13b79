{-# OPTIONS_HADDOCK hide #-}
-- | Internal, not a stable API: called at run time by the code that the
-- splices generate (so exposed, but hidden from the documentation).
--
-- The dual array operations: each records one node on the tape, whose
-- forward and reverse rules are C kernels.  Those of the primitives that
-- are one Haskell function each are generated ("Run.ArrayPrimDuals", which
-- this module re-exports); here are the rest, made of the engine's calls
-- or of those.
module Numeric.DualRev.Internal.Run.Array.Dual
  ( module Numeric.DualRev.Internal.Run.Array.Dual
  , module Numeric.DualRev.Internal.Run.Array.PrimDuals
  ) where

import Control.Monad (forM)
import Foreign.Marshal.Alloc (alloca)
import Foreign.Marshal.Array (withArrayLen)
import Foreign.Storable (peek)

import Numeric.DualRev.Internal.Engine.ArrayFFI
import Numeric.DualRev.Internal.Run.Scalar.AD
import Numeric.DualRev.Internal.Run.Array.Data
import Numeric.DualRev.Internal.Run.Array.PrimDuals

op1 :: (T -> Id -> IO Id) -> Id -> AD Id
op1 f a = AD (\t -> f t a)
{-# INLINE op1 #-}

arrSize :: T -> Id -> IO Int
arrSize t i = fromIntegral <$> c_arr_size t i

arrShape :: T -> Id -> IO (Int, Int)
arrShape t i = alloca $ \pr -> alloca $ \pm -> alloca $ \pn -> do
  _ <- c_arr_shape t i pr pm pn
  (,) <$> (fromIntegral <$> peek pm) <*> (fromIntegral <$> peek pn)

------------------------------------------------------------------------------
-- Dual operations: vectors

-- | Elementwise functions, in the order of the C enum dr_arr_fn.
data Fn = Neg | Abs | Sqrt | Exp | Log | Sin | Cos | Tanh | Sigmoid | Relu | Square
  deriving (Eq, Show, Enum, Bounded)

vmapD :: Fn -> DVec -> AD DVec
vmapD f (DVec x) = DVec <$> op1 (\t -> c_arr_map t (fromIntegral (fromEnum f))) x

vlengthD :: DVec -> AD Int
vlengthD (DVec x) = AD (\t -> arrSize t x)

fromListD :: [D] -> AD DVec
fromListD ds = AD $ \t ->
  withArrayLen [v | D v _ <- ds] $ \n vs -> withArrayLen [i | D _ i <- ds] $ \_ is ->
    DVec <$> c_arr_from_reals t (fromIntegral n) vs is

-- | The elements, each an index node of the vector.
toListD :: DVec -> AD [D]
toListD v = do
  n <- vlengthD v
  mapM (vindexD v) [0 .. n - 1]

vconcatD :: [DVec] -> AD DVec
vconcatD vs = AD $ \t -> withArrayLen [i | DVec i <- vs] $ \n p ->
  DVec <$> c_arr_concat t 0 (fromIntegral n) p

------------------------------------------------------------------------------
-- Dual operations: matrices

mmapD :: Fn -> DMat -> AD DMat
mmapD f (DMat x) = DMat <$> op1 (\t -> c_arr_map t (fromIntegral (fromEnum f))) x

-- | The elementwise functions one by one (each a primitive of its own).
vnegD, vabsD, vsqrtD, vexpD, vlogD, vsinD, vcosD, vtanhD, vsigmoidD, vreluD, vsquareD :: DVec -> AD DVec
vnegD = vmapD Neg
vabsD = vmapD Abs
vsqrtD = vmapD Sqrt
vexpD = vmapD Exp
vlogD = vmapD Log
vsinD = vmapD Sin
vcosD = vmapD Cos
vtanhD = vmapD Tanh
vsigmoidD = vmapD Sigmoid
vreluD = vmapD Relu
vsquareD = vmapD Square

mnegD, mabsD, msqrtD, mexpD, mlogD, msinD, mcosD, mtanhD, msigmoidD, mreluD, msquareD :: DMat -> AD DMat
mnegD = mmapD Neg
mabsD = mmapD Abs
msqrtD = mmapD Sqrt
mexpD = mmapD Exp
mlogD = mmapD Log
msinD = mmapD Sin
mcosD = mmapD Cos
mtanhD = mmapD Tanh
msigmoidD = mmapD Sigmoid
mreluD = mmapD Relu
msquareD = mmapD Square

matMulD :: DMat -> DMat -> AD DMat
matMulD a = matMulTD False a False

rowsD, colsD :: DMat -> AD Int
rowsD (DMat m) = AD (\t -> fst <$> arrShape t m)
colsD (DMat m) = AD (\t -> snd <$> arrShape t m)

fromRowsD :: [[D]] -> AD DMat
fromRowsD rs = do
  v <- fromListD (concat rs)
  let r = length rs
      c = case rs of { (x : _) -> length x; [] -> 0 }
  reshapeD r c v

toRowsD :: DMat -> AD [[D]]
toRowsD m = do
  r <- rowsD m
  c <- colsD m
  forM [0 .. r - 1] $ \i -> forM [0 .. c - 1] $ \j -> mindexD m i j

reshapeD :: Int -> Int -> DVec -> AD DMat
reshapeD r c (DVec x) = AD (\t -> DMat <$> c_arr_reshape t x 2 (fromIntegral r) (fromIntegral c))

flattenD :: DMat -> AD DVec
flattenD m@(DMat x) = do
  r <- rowsD m
  c <- colsD m
  AD (\t -> DVec <$> c_arr_reshape t x 1 (fromIntegral (r * c)) 1)

vstackD, hstackD :: [DMat] -> AD DMat
vstackD ms = AD $ \t -> withArrayLen [i | DMat i <- ms] $ \n p -> DMat <$> c_arr_concat t 0 (fromIntegral n) p
hstackD ms = AD $ \t -> withArrayLen [i | DMat i <- ms] $ \n p -> DMat <$> c_arr_concat t 1 (fromIntegral n) p