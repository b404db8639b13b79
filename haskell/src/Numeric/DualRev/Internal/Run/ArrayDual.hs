{-# LANGUAGE FlexibleInstances #-}
{-# LANGUAGE UndecidableInstances #-}
{-# LANGUAGE FunctionalDependencies #-}
-- | Arrays on the tape: the representation of 'Vec' and 'Mat' (plain values
-- of ordinary code) and of their duals (node ids of differentiable code), the
-- dual operations (one tape node each, C kernels forward and reverse), the
-- walks the wrappers use for array inputs and outputs, and 'liftP', which
-- runs a dual operation on constants to give the ordinary operation.
module Numeric.DualRev.Internal.Run.ArrayDual where

import Control.Monad (forM, forM_, when)
import Data.Int (Int64)
import Foreign.ForeignPtr (ForeignPtr, mallocForeignPtrArray, touchForeignPtr, withForeignPtr)
import Foreign.Marshal.Alloc (alloca)
import Foreign.Marshal.Array (allocaArray, peekArray, pokeArray, withArrayLen)
import Foreign.Ptr (Ptr)
import Foreign.Storable (peek, pokeElemOff)
import System.IO.Unsafe (unsafeDupablePerformIO)

import Numeric.DualRev.Internal.Run.AD
import Numeric.DualRev.Internal.Engine.ArrayFFI
import Numeric.DualRev.Internal.Run.Runners (withPooledTape)

-- | A vector of doubles (immutable).
data Vec = Vec !Int !(ForeignPtr Double)

-- | A row-major matrix of doubles (immutable): rows, columns, elements.
data Mat = Mat !Int !Int !(ForeignPtr Double)

-- | A vector in differentiable code: an array node of the tape.
newtype DVec = DVec Int64

-- | A matrix in differentiable code: an array node of the tape.
newtype DMat = DMat Int64

instance Show Vec where
  showsPrec p v = showParen (p > 10) (showString "fromList " . shows (vecElems v))

instance Eq Vec where
  a == b = vecElems a == vecElems b

instance Show Mat where
  showsPrec p m = showParen (p > 10) (showString "fromRows " . shows (matRows m))

instance Eq Mat where
  a@(Mat r c _) == b@(Mat r' c' _) = (r, c) == (r', c') && matRows a == matRows b

vecElems :: Vec -> [Double]
vecElems (Vec n fp) = unsafeDupablePerformIO (withForeignPtr fp (peekArray n))

matRows :: Mat -> [[Double]]
matRows (Mat r c fp) = chunks (unsafeDupablePerformIO (withForeignPtr fp (peekArray (r * c))))
  where chunks xs = if c == 0 then replicate r [] else go xs
        go [] = []
        go xs = let (a, b) = splitAt c xs in a : go b

------------------------------------------------------------------------------
-- Building blocks

arrayError :: String -> IO a
arrayError = ioError . userError . ("dualrev: " ++)

newBuf :: Int -> (Ptr Double -> IO ()) -> IO (ForeignPtr Double)
newBuf n fill = do
  fp <- mallocForeignPtrArray (max 1 n)
  withForeignPtr fp fill
  pure fp

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

------------------------------------------------------------------------------
-- Constants and the ordinary operations

-- | A plain value and its dual: moving a value onto a tape as a constant and
-- reading a dual's value back.
--
-- Arrays go onto the tape without a copy (the tape borrows their pinned
-- storage); 'keepAlive' must then be called after the tape's last use of
-- them (its sweep), so the storage is not collected before.
class Carrier p d | p -> d, d -> p where
  toDual :: T -> p -> IO d
  fromDual :: T -> d -> IO p
  keepAlive :: p -> IO ()
  keepAlive _ = pure ()

instance Carrier Vec DVec where
  toDual t (Vec n fp) = withForeignPtr fp $ \p -> DVec <$> c_arr_const_ref t 1 (fromIntegral n) 1 p
  fromDual = primalVec
  keepAlive (Vec _ fp) = touchForeignPtr fp

instance Carrier Mat DMat where
  toDual t (Mat r c fp) = withForeignPtr fp $ \p ->
    DMat <$> c_arr_const_ref t 2 (fromIntegral r) (fromIntegral c) p
  fromDual = primalMat
  keepAlive (Mat _ _ fp) = touchForeignPtr fp

instance Carrier Double D where
  toDual _ x = pure (constD x)
  fromDual _ (D x _) = pure x

instance Carrier Int Int where
  toDual _ = pure
  fromDual _ = pure

instance Carrier Bool Bool where
  toDual _ = pure
  fromDual _ = pure

instance (Carrier p d, Carrier q e) => Carrier (p, q) (d, e) where
  toDual t (a, b) = (,) <$> toDual t a <*> toDual t b
  fromDual t (a, b) = (,) <$> fromDual t a <*> fromDual t b
  keepAlive (a, b) = keepAlive a >> keepAlive b

instance Carrier p d => Carrier [p] [d] where
  toDual t = mapM (toDual t)
  fromDual t = mapM (fromDual t)
  keepAlive = mapM_ keepAlive

-- | Run a dual operation on constants: the ordinary operation, computed by
-- the same C kernels.  The tape is a temporary one.
liftP :: Carrier r dr => (T -> IO dr) -> r
liftP body = unsafeDupablePerformIO $ withPooledTape $ \t -> do
  d <- body t
  checkTape t
  fromDual t d

liftP1 :: (Carrier a da, Carrier r dr) => (da -> AD dr) -> a -> r
liftP1 f a = liftP (\t -> toDual t a >>= \a' -> unAD (f a') t <* keepAlive a)

liftP2 :: (Carrier a da, Carrier b db, Carrier r dr) => (da -> db -> AD dr) -> a -> b -> r
liftP2 f a b = liftP (\t -> do { a' <- toDual t a; b' <- toDual t b; unAD (f a' b') t <* keepAlive (a, b) })

liftP3 :: (Carrier a da, Carrier b db, Carrier c dc, Carrier r dr)
       => (da -> db -> dc -> AD dr) -> a -> b -> c -> r
liftP3 f a b c = liftP (\t -> do { a' <- toDual t a; b' <- toDual t b; c' <- toDual t c; unAD (f a' b' c') t <* keepAlive (a, (b, c)) })

liftP4 :: (Carrier a da, Carrier b db, Carrier c dc, Carrier e de, Carrier r dr)
       => (da -> db -> dc -> de -> AD dr) -> a -> b -> c -> e -> r
liftP4 f a b c e = liftP $ \t -> do
  a' <- toDual t a
  b' <- toDual t b
  c' <- toDual t c
  e' <- toDual t e
  unAD (f a' b' c' e') t <* keepAlive (a, (b, (c, e)))

liftP5 :: (Carrier a da, Carrier b db, Carrier c dc, Carrier e de, Carrier g dg, Carrier r dr)
       => (da -> db -> dc -> de -> dg -> AD dr) -> a -> b -> c -> e -> g -> r
liftP5 f a b c e g = liftP $ \t -> do
  a' <- toDual t a
  b' <- toDual t b
  c' <- toDual t c
  e' <- toDual t e
  g' <- toDual t g
  unAD (f a' b' c' e' g') t <* keepAlive (a, (b, (c, (e, g))))

------------------------------------------------------------------------------
-- Walks for the wrappers (inputs, values, seeds, adjoints)

-- | Input arrays are borrowed by the tape, not copied: the runners keep the
-- input value alive until after the sweep ('collectVec' touches it).
inputVec :: T -> Vec -> IO DVec
inputVec t (Vec n fp) = withForeignPtr fp $ \p -> DVec <$> c_arr_input_ref t 1 (fromIntegral n) 1 p

inputMat :: T -> Mat -> IO DMat
inputMat t (Mat r c fp) = withForeignPtr fp $ \p ->
  DMat <$> c_arr_input_ref t 2 (fromIntegral r) (fromIntegral c) p

primalVec :: T -> DVec -> IO Vec
primalVec t (DVec i) = do
  n <- arrSize t i
  when (n < 0) $ arrayError "not an array of this tape (an earlier array operation failed?)"
  Vec n <$> newBuf n (\p -> () <$ c_arr_read t i p)

primalMat :: T -> DMat -> IO Mat
primalMat t (DMat i) = do
  n <- arrSize t i
  when (n < 0) $ arrayError "not an array of this tape (an earlier array operation failed?)"
  (r, c) <- arrShape t i
  Mat r c <$> newBuf n (\p -> () <$ c_arr_read t i p)

seedVec :: T -> DVec -> Vec -> IO ()
seedVec t (DVec i) (Vec n fp) = do
  m <- arrSize t i
  when (m /= n) $ arrayError "the cotangent vector has another length than the output"
  withForeignPtr fp $ \p -> () <$ c_arr_seed t i p

seedMat :: T -> DMat -> Mat -> IO ()
seedMat t (DMat i) (Mat r c fp) = do
  (r', c') <- arrShape t i
  when ((r, c) /= (r', c')) $ arrayError "the cotangent matrix has another shape than the output"
  withForeignPtr fp $ \p -> () <$ c_arr_seed t i p

collectVec :: T -> Vec -> DVec -> IO (IO Vec)
collectVec t v@(Vec n _) (DVec i) = pure (Vec n <$> newBuf n (\p -> () <$ c_arr_adjoint t i p) <* keepAlive v)

collectMat :: T -> Mat -> DMat -> IO (IO Mat)
collectMat t m@(Mat r c _) (DMat i) = pure (Mat r c <$> newBuf (r * c) (\p -> () <$ c_arr_adjoint t i p) <* keepAlive m)

-- | One seeding action per element (one-hot cotangents), for Jacobians.
seedsVec :: T -> DVec -> [T -> IO ()] -> IO [T -> IO ()]
seedsVec t (DVec i) acc = (++ acc) <$> elementSeeds t i

seedsMat :: T -> DMat -> [T -> IO ()] -> IO [T -> IO ()]
seedsMat t (DMat i) acc = (++ acc) <$> elementSeeds t i

elementSeeds :: T -> Id -> IO [T -> IO ()]
elementSeeds t i = do
  n <- arrSize t i
  pure [ \t' -> allocaArray n $ \p -> do
           forM_ [0 .. n - 1] $ \j -> pokeElemOff p j (if j == k then 1 else 0)
           () <$ c_arr_seed t' i p
       | k <- [0 .. n - 1] ]
