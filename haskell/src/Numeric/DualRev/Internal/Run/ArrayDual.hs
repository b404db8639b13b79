{-# OPTIONS_HADDOCK hide #-}
-- | Internal, not a stable API: called at run time by the code that the
-- splices generate (so exposed, but hidden from the documentation).
--
-- The dual array operations: each records one node on the tape, whose
-- forward and reverse rules are C kernels.
module Numeric.DualRev.Internal.Run.ArrayDual where

import Control.Monad (forM)
import Data.Int (Int64)
import Foreign.Marshal.Alloc (alloca)
import Foreign.Marshal.Array (allocaArray, pokeArray, withArrayLen)
import Foreign.Ptr (Ptr)
import Foreign.Storable (peek)

import Numeric.DualRev.Internal.Engine.ArrayFFI
import Numeric.DualRev.Internal.Run.AD
import Numeric.DualRev.Internal.Run.ArrayData

op1 :: (T -> Id -> IO Id) -> Id -> AD Id
op1 f a = AD (\t -> f t a)
{-# INLINE op1 #-}

op2 :: (T -> Id -> Id -> IO Id) -> Id -> Id -> AD Id
op2 f a b = AD (\t -> f t a b)
{-# INLINE op2 #-}

scalarOut :: (T -> Ptr Double -> IO Id) -> AD D
scalarOut f = AD $ \t -> alloca $ \p -> do
  i <- f t p
  v <- peek p
  pure (D v i)

arrSize :: T -> Id -> IO Int
arrSize t i = fromIntegral <$> c_arr_size t i

arrShape :: T -> Id -> IO (Int, Int)
arrShape t i = alloca $ \pr -> alloca $ \pm -> alloca $ \pn -> do
  _ <- c_arr_shape t i pr pm pn
  (,) <$> (fromIntegral <$> peek pm) <*> (fromIntegral <$> peek pn)

ints :: [Int] -> (Ptr Int64 -> IO a) -> IO a
ints is k = allocaArray (max 1 (length is)) $ \p -> do
  pokeArray p (map fromIntegral is)
  k p

------------------------------------------------------------------------------
-- Dual operations: vectors

vaddD, vsubD, vmulD, vdivD :: DVec -> DVec -> AD DVec
vaddD (DVec a) (DVec b) = DVec <$> op2 c_arr_add a b
vsubD (DVec a) (DVec b) = DVec <$> op2 c_arr_sub a b
vmulD (DVec a) (DVec b) = DVec <$> op2 c_arr_mul a b
vdivD (DVec a) (DVec b) = DVec <$> op2 c_arr_div a b

vscaleD :: D -> DVec -> AD DVec
vscaleD (D s i) (DVec x) = AD (\t -> DVec <$> c_arr_scale t s i x)

-- | Elementwise functions, in the order of the C enum dr_arr_fn.
data Fn = Neg | Abs | Sqrt | Exp | Log | Sin | Cos | Tanh | Sigmoid | Relu | Square
  deriving (Eq, Show, Enum, Bounded)

vmapD :: Fn -> DVec -> AD DVec
vmapD f (DVec x) = DVec <$> op1 (\t -> c_arr_map t (fromIntegral (fromEnum f))) x

dotD :: DVec -> DVec -> AD D
dotD (DVec a) (DVec b) = scalarOut (\t -> c_arr_dot t a b)

vsumD, vmaximumD, logSumExpD :: DVec -> AD D
vsumD (DVec x) = scalarOut (\t -> c_arr_sum t x)
vmaximumD (DVec x) = scalarOut (\t -> c_arr_max t x)
logSumExpD (DVec x) = scalarOut (\t -> c_arr_logsumexp t x)

softmaxD, logSoftmaxD :: DVec -> AD DVec
softmaxD (DVec x) = DVec <$> op1 c_arr_softmax x
logSoftmaxD (DVec x) = DVec <$> op1 c_arr_log_softmax x

indexD :: DVec -> Int -> AD D
indexD (DVec x) k = scalarOut (\t -> c_arr_index t x (fromIntegral k))

vlengthD :: DVec -> AD Int
vlengthD (DVec x) = AD (\t -> arrSize t x)

fromListD :: [D] -> AD DVec
fromListD ds = AD $ \t ->
  withArrayLen [v | D v _ <- ds] $ \n vs -> withArrayLen [i | D _ i <- ds] $ \_ is ->
    DVec <$> c_arr_from_reals t (fromIntegral n) vs is

-- | The elements, each an index node of the vector.
toListD :: DVec -> AD [D]
toListD v@(DVec x) = do
  n <- vlengthD v
  mapM (\k -> scalarOut (\t -> c_arr_index t x (fromIntegral k))) [0 .. n - 1]

vsliceD :: Int -> Int -> DVec -> AD DVec
vsliceD start len (DVec x) = AD (\t -> DVec <$> c_arr_slice t x (fromIntegral start) (fromIntegral len))

vconcatD :: [DVec] -> AD DVec
vconcatD vs = AD $ \t -> withArrayLen [i | DVec i <- vs] $ \n p ->
  DVec <$> c_arr_concat t 0 (fromIntegral n) p

gatherD :: [Int] -> DVec -> AD DVec
gatherD is (DVec x) = AD $ \t -> ints is $ \p -> DVec <$> c_arr_gather t x (fromIntegral (length is)) p

scatterD :: Int -> [Int] -> DVec -> AD DVec
scatterD n is (DVec x) = AD $ \t -> ints is $ \p -> DVec <$> c_arr_scatter t x (fromIntegral n) p

------------------------------------------------------------------------------
-- Dual operations: matrices

maddD, msubD, mmulD, mdivD :: DMat -> DMat -> AD DMat
maddD (DMat a) (DMat b) = DMat <$> op2 c_arr_add a b
msubD (DMat a) (DMat b) = DMat <$> op2 c_arr_sub a b
mmulD (DMat a) (DMat b) = DMat <$> op2 c_arr_mul a b
mdivD (DMat a) (DMat b) = DMat <$> op2 c_arr_div a b

mscaleD :: D -> DMat -> AD DMat
mscaleD (D s i) (DMat x) = AD (\t -> DMat <$> c_arr_scale t s i x)

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

matVecD :: DMat -> DVec -> AD DVec
matVecD (DMat m) (DVec v) = DVec <$> op2 c_arr_matvec m v

vecMatD :: DVec -> DMat -> AD DVec
vecMatD (DVec v) (DMat m) = DVec <$> op2 c_arr_vecmat v m

-- | op a * op b, op transposing where the flag says so.
matMulTD :: Bool -> DMat -> Bool -> DMat -> AD DMat
matMulTD ta (DMat a) tb (DMat b) = AD (\t -> DMat <$> c_arr_matmul t a (flag ta) b (flag tb))
  where flag x = if x then 1 else 0

matMulD :: DMat -> DMat -> AD DMat
matMulD a = matMulTD False a False

outerD :: DVec -> DVec -> AD DMat
outerD (DVec u) (DVec v) = DMat <$> op2 c_arr_outer u v

transposeD :: DMat -> AD DMat
transposeD (DMat m) = DMat <$> op1 c_arr_transpose m

msumD, mmaximumD :: DMat -> AD D
msumD (DMat x) = scalarOut (\t -> c_arr_sum t x)
mmaximumD (DMat x) = scalarOut (\t -> c_arr_max t x)

sumRowsD, sumColsD, logSumExpRowsD :: DMat -> AD DVec
sumRowsD (DMat m) = DVec <$> op1 c_arr_sum_rows m
sumColsD (DMat m) = DVec <$> op1 c_arr_sum_cols m
logSumExpRowsD (DMat m) = DVec <$> op1 c_arr_logsumexp_rows m

softmaxRowsD, logSoftmaxRowsD :: DMat -> AD DMat
softmaxRowsD (DMat x) = DMat <$> op1 c_arr_softmax x
logSoftmaxRowsD (DMat x) = DMat <$> op1 c_arr_log_softmax x

addRowVecD, addColVecD :: DMat -> DVec -> AD DMat
addRowVecD (DMat m) (DVec v) = DMat <$> op2 c_arr_add_rowvec m v
addColVecD (DMat m) (DVec v) = DMat <$> op2 c_arr_add_colvec m v

replicateRowsD, replicateColsD :: Int -> DVec -> AD DMat
replicateRowsD r (DVec v) = AD (\t -> DMat <$> c_arr_replicate_rows t v (fromIntegral r))
replicateColsD c (DVec v) = AD (\t -> DMat <$> c_arr_replicate_cols t v (fromIntegral c))

index2D :: DMat -> Int -> Int -> AD D
index2D (DMat m) i j = scalarOut (\t -> c_arr_index2 t m (fromIntegral i) (fromIntegral j))

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
toRowsD m@(DMat x) = do
  r <- rowsD m
  c <- colsD m
  forM [0 .. r - 1] $ \i -> forM [0 .. c - 1] $ \j ->
    scalarOut (\t -> c_arr_index2 t x (fromIntegral i) (fromIntegral j))

reshapeD :: Int -> Int -> DVec -> AD DMat
reshapeD r c (DVec x) = AD (\t -> DMat <$> c_arr_reshape t x 2 (fromIntegral r) (fromIntegral c))

flattenD :: DMat -> AD DVec
flattenD m@(DMat x) = do
  r <- rowsD m
  c <- colsD m
  AD (\t -> DVec <$> c_arr_reshape t x 1 (fromIntegral (r * c)) 1)

msliceD :: Int -> Int -> DMat -> AD DMat
msliceD start len (DMat x) = AD (\t -> DMat <$> c_arr_slice t x (fromIntegral start) (fromIntegral len))

blockD :: Int -> Int -> Int -> Int -> DMat -> AD DMat
blockD r0 nr c0 nc (DMat x) = AD $ \t ->
  DMat <$> c_arr_slice2 t x (fromIntegral r0) (fromIntegral nr) (fromIntegral c0) (fromIntegral nc)

vstackD, hstackD :: [DMat] -> AD DMat
vstackD ms = AD $ \t -> withArrayLen [i | DMat i <- ms] $ \n p -> DMat <$> c_arr_concat t 0 (fromIntegral n) p
hstackD ms = AD $ \t -> withArrayLen [i | DMat i <- ms] $ \n p -> DMat <$> c_arr_concat t 1 (fromIntegral n) p

gatherRowsD :: [Int] -> DMat -> AD DMat
gatherRowsD is (DMat x) = AD $ \t -> ints is $ \p -> DMat <$> c_arr_gather t x (fromIntegral (length is)) p

scatterRowsD :: Int -> [Int] -> DMat -> AD DMat
scatterRowsD n is (DMat x) = AD $ \t -> ints is $ \p -> DMat <$> c_arr_scatter t x (fromIntegral n) p
