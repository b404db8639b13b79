{-# LANGUAGE MagicHash #-}
{-# LANGUAGE UnboxedTuples #-}
{-# OPTIONS_HADDOCK hide #-}
-- | Internal, not a stable API: called at run time by the code that the
-- splices generate (so exposed, but hidden from the documentation).
--
-- The runners that see a function's input and output as flat arrays of
-- scalars, as the engine's Jacobian, forward-mode and second-order calls
-- want them ('Numeric.DualRev.jacobian', 'Numeric.DualRev.jvp',
-- 'Numeric.DualRev.hvp', 'Numeric.DualRev.hessian').  The generated code
-- passes three type-directed walks:
--
-- * a traversal of the scalars of a plain value ('Trav': every 'Double',
--   every element of a 'Vec' or 'Mat', left to right; discrete parts are
--   left alone), which flattens an input or a direction to a list and puts
--   a list of results back into the input's (or output's) shape;
-- * the input walk over a supply of input nodes ('Supply'): every scalar of
--   the input is an input node of its own (an array input is built from its
--   elements' nodes), so that each has an id the engine can take;
-- * the output walk listing the output's scalars ('R', value and id; an
--   array output's elements by index nodes).
module Numeric.DualRev.Internal.Run.Driver.Flat
  ( -- * Runners
    jacobianRun, jvpRun, jvpsRun, gnvpRun, hvpRun, hessianRun, sparseJacobianRun, sparseHessianRun, withOrder2Tape
    -- * Engine calls on flat arrays (also the overloaded mode's)
  , withReals, engine, rowsOf
    -- * Taped functions ("Numeric.DualRev.Internal.Run.Driver.Taped")
  , record, recordArrays, countScalars, flatten, directionOf, fromBuffer, Counter, newCounter, tick, tickBy
    -- * Walks
  , Trav, R, Supply
  , travD, travVec, travMat
  , inputS, inputSVec, inputSMat
  , outD, outId, outList, outVec, outMat
  ) where

import Control.Exception (Handler (..), IOException, catches, finally, throwIO)
import Control.Monad (foldM, forM, replicateM, when)
import Data.IORef (IORef, modifyIORef', newIORef, readIORef)
import Data.Int (Int64)
import Data.List (transpose)
import Foreign.C.String (peekCString)
import Foreign.C.Types (CInt, CSize)
import Foreign.ForeignPtr (ForeignPtr, withForeignPtr)
import Foreign.Marshal.Alloc (alloca, allocaBytes)
import Foreign.Marshal.Array (allocaArray, withArray)
import Foreign.Ptr (Ptr, castPtr, nullPtr, plusPtr)
import Foreign.Storable (peek, peekByteOff, peekElemOff, pokeByteOff, pokeElemOff)
import GHC.Exts (Int (..), MutableByteArray#, RealWorld, newByteArray#, readIntArray#, writeIntArray#, (+#))
import GHC.IO (IO (..))
import System.IO.Unsafe (unsafeDupablePerformIO)

import Numeric.DualRev.Internal.Engine.ArrayFFI (c_arr_from_reals, c_arr_index2, c_arr_index, c_arr_input_ref, c_arr_reshape)
import Numeric.DualRev.Internal.Engine.FFI
import Numeric.DualRev.Internal.Engine.NestFFI (c_tape_set_order)
import Numeric.DualRev.Internal.Run.Scalar.AD
import Numeric.DualRev.Internal.Run.Array.Data
import Numeric.DualRev.Internal.Run.Array.Dual (arrShape, arrSize)
import Numeric.DualRev.Internal.Run.Driver.Runners (throwShape, withPooledTape)

------------------------------------------------------------------------------
-- Walks

-- | A traversal of the scalars of a plain value, left to right.
type Trav a = (Double -> IO Double) -> a -> IO a

-- | A scalar of the output: its value and its node (-1 for a constant).
type R = (Double, Int64)

-- | The input nodes for the scalars of the input, in the order of 'Trav':
-- consecutive ids from the first, the next one's offset in a counter.  With
-- a list of arrays (a taped gradient's), a @Vec@ or @Mat@ of the input is an
-- array input node of its own that borrows its memory (which the caller
-- keeps alive with the tape), and its node, offset and length are put on
-- the list; its elements keep their offsets among the scalars but get no
-- input nodes (the second counter: the elements so far), so a scalar's
-- node is first + its offset - the arrays' elements before it.  A supply
-- of no tape (a null pointer) records nothing: the walk that counts.
data Supply = Supply (Ptr CTape) !Int64 !Counter !Counter !(Maybe (IORef [(Int64, Int, Int)]))

-- | A mutable count in a byte array: no box per step and no write barrier,
-- as an 'IORef' would have.
data Counter = Counter (MutableByteArray# RealWorld)

newCounter :: IO Counter
newCounter = IO $ \s -> case newByteArray# 8# s of
  (# s1, a #) -> case writeIntArray# a 0# 0# s1 of
    s2 -> (# s2, Counter a #)

-- | The count, and one more after it.
tick :: Counter -> IO Int
tick c = tickBy c 1
{-# INLINE tick #-}

-- | The count, and n more after it.
tickBy :: Counter -> Int -> IO Int
tickBy (Counter a) (I# n) = IO $ \s -> case readIntArray# a 0# s of
  (# s1, k #) -> case writeIntArray# a 0# (k +# n) s1 of
    s2 -> (# s2, I# k #)
{-# INLINE tickBy #-}

travD :: Trav Double
travD f = f

travVec :: Trav Vec
travVec f (Vec n fp) = Vec n <$> travElems f n fp

travMat :: Trav Mat
travMat f (Mat r c fp) = Mat r c <$> travElems f (r * c) fp

-- | f over an array's n elements in order, into a new one: a loop, not a
-- list of them (a taped gradient counts its input's scalars this way, and
-- the lists of a large array's elements were copied by every collection)
travElems :: (Double -> IO Double) -> Int -> ForeignPtr Double -> IO (ForeignPtr Double)
travElems f n fp = withForeignPtr fp $ \src -> newBuf n $ \dst ->
  let go i
        | i >= n = pure ()
        | otherwise = peekElemOff src i >>= f >>= pokeElemOff dst i >> go (i + 1)
  in go 0

-- | The scalars of a plain value as a list.
flatten :: Trav a -> a -> IO [Double]
flatten trav x = do
  ref <- newIORef []
  _ <- trav (\d -> modifyIORef' ref (d :) >> pure d) x
  reverse <$> readIORef ref

-- | The number of scalars of a plain value.
countScalars :: Trav a -> a -> IO Int
countScalars trav x = do
  c <- newCounter
  _ <- trav (\d -> d <$ tick c) x
  tick c

-- | A value of the shape of the template x (its discrete parts kept) with
-- the scalars read in order from an array of n.
fromBuffer :: Trav a -> a -> Int -> Ptr Double -> IO a
fromBuffer trav x n p = do
  c <- newCounter
  let next _ = do
        k <- tick c
        if k < n then peekElemOff p k
          else throwShape "a value has more scalars than the input it should match"
  trav next x

-- | An engine call's result array of n doubles, read as a value of x's shape.
resultAs :: Trav a -> a -> Int -> (Ptr Double -> IO ()) -> IO a
resultAs trav x n act = allocaArray (max 1 n) $ \p -> act p >> fromBuffer trav x n p

inputS :: Supply -> Double -> IO D
inputS (Supply _ first c skip _) x = do
  k <- tick c
  s <- tickBy skip 0
  pure (D x (first + fromIntegral (k - s)))
{-# INLINE inputS #-}

-- | An array input: a vector node built from its elements' input nodes
-- (or an array input node: see 'Supply').
inputSVec :: Supply -> Vec -> IO DVec
inputSVec s (Vec n fp) = DVec <$> arrayInput s 1 n 1 fp

inputSMat :: Supply -> Mat -> IO DMat
inputSMat s (Mat r c fp) = DMat <$> arrayInput s 2 r c fp

-- | The node of an array of rank 1 or 2, r x cl, of the input.
arrayInput :: Supply -> CInt -> Int -> Int -> ForeignPtr Double -> IO Int64
arrayInput s@(Supply t _ c skip arrs) rank r cl fp = case arrs of
  Just ref | r * cl > 0 -> do
    k0 <- tickBy c (r * cl)
    _ <- tickBy skip (r * cl)
    if t == nullPtr then pure (-1) else do
      i <- withForeignPtr fp $ \pv -> c_arr_input_ref t rank (fromIntegral r) (fromIntegral cl) pv
      modifyIORef' ref ((i, k0, r * cl) :)
      pure i
  _ | t == nullPtr -> pure (-1)   -- (an empty array, in the walk that counts)
  _ -> do
    v <- fromSupply s (r * cl) fp
    if rank == 1 then pure v else c_arr_reshape t v 2 (fromIntegral r) (fromIntegral cl)

-- | A vector node of the next n input nodes, whose values are the array's.
fromSupply :: Supply -> Int -> ForeignPtr Double -> IO Int64
fromSupply (Supply t first c _ _) n fp = do
  ks <- replicateM n (tick c)
  withForeignPtr fp $ \pv -> withArray [first + fromIntegral k | k <- ks] $ \pi' ->
    c_arr_from_reals t (fromIntegral n) pv pi'

outD :: Ptr CTape -> D -> [R] -> IO [R]
outD _ (D v i) acc = pure ((v, i) : acc)

-- | A part without scalars.
outId :: Ptr CTape -> a -> [R] -> IO [R]
outId _ _ acc = pure acc

outList :: (Ptr CTape -> a' -> [R] -> IO [R]) -> Ptr CTape -> [a'] -> [R] -> IO [R]
outList f t ds acc = foldM (flip (f t)) acc (reverse ds)

-- | The elements of an array output, as index nodes.
outVec :: Ptr CTape -> DVec -> [R] -> IO [R]
outVec t (DVec i) acc = do
  n <- arrSize t i
  rs <- forM [0 .. n - 1] $ \k -> alloca $ \pv -> do
    j <- c_arr_index t i (fromIntegral k) pv
    v <- peek pv
    pure (v, j)
  pure (rs ++ acc)

outMat :: Ptr CTape -> DMat -> [R] -> IO [R]
outMat t (DMat i) acc = do
  (r, c) <- arrShape t i
  rs <- forM [(a, b) | a <- [0 .. r - 1], b <- [0 .. c - 1]] $ \(a, b) -> alloca $ \pv -> do
    j <- c_arr_index2 t i (fromIntegral a) (fromIntegral b) pv
    v <- peek pv
    pure (v, j)
  pure (rs ++ acc)

------------------------------------------------------------------------------
-- Recording

-- | Records f at x, every scalar of x an input node (consecutive ids, in the
-- order of the traversal): the number of the input's scalars, the first
-- one's id and the dual output.
record :: Trav a -> (Supply -> a -> IO a') -> (a' -> AD b') -> Ptr CTape -> a -> IO (Int, Int64, b')
record = recordWith Nothing

recordWith :: Maybe (IORef [(Int64, Int, Int)]) -> Trav a -> (Supply -> a -> IO a') -> (a' -> AD b')
           -> Ptr CTape -> a -> IO (Int, Int64, b')
recordWith arrs trav ins f t x = do
  -- the scalars, and (arrays as array input nodes) the arrays' elements
  -- among them, which get no input node: counted by a walk that records
  -- nothing
  (n, elems) <- case arrs of
    Nothing -> (\k -> (k, 0)) <$> countScalars trav x
    Just _ -> do
      c0 <- newCounter
      s0 <- newCounter
      scratch <- newIORef []
      _ <- ins (Supply nullPtr 0 c0 s0 (Just scratch)) x
      (,) <$> tickBy c0 0 <*> tickBy s0 0
  first <- c_input_first t (fromIntegral (n - elems))
  checkTape t
  c <- newCounter
  skip <- newCounter
  x' <- ins (Supply t first c skip arrs) x
  y' <- unAD (f x') t
  checkTape t
  pure (n, first, y')

-- | 'record' with the input's arrays as array input nodes ('Supply'): also
-- their nodes, offsets among the scalars and lengths, in the input's order.
-- The scalars outside them are the input nodes first, first + 1, ...
recordArrays :: Trav a -> (Supply -> a -> IO a') -> (a' -> AD b') -> Ptr CTape -> a
             -> IO (Int, Int64, b', [(Int64, Int, Int)])
recordArrays trav ins f t x = do
  ref <- newIORef []
  (n, first, y') <- recordWith (Just ref) trav ins f t x
  arrs <- readIORef ref
  pure (n, first, y', reverse arrs)

-- | The input's scalars as the engine's x array wants them: values and the
-- ids that 'record' gave them.
inputReals :: Trav a -> a -> Int64 -> IO [R]
inputReals trav x first = do
  xs <- flatten trav x
  pure (zip xs [first ..])

-- | The scalars of a direction, which must have as many as the input.
direction :: Trav a -> [R] -> a -> IO [Double]
direction trav xr = directionOf trav (length xr)

-- | The scalars of a direction, which must have n, the input's number.
directionOf :: Trav a -> Int -> a -> IO [Double]
directionOf trav n v = do
  vs <- flatten trav v
  when (length vs /= n) $
    throwShape ("the direction has " ++ show (length vs) ++ " scalars and the input "
                ++ show n ++ ": it must have the input's shape")
  pure vs

-- | An array of C dr_real.
withReals :: [R] -> (CSize -> Ptr CReal -> IO a) -> IO a
withReals rs act = allocaBytes (16 * max 1 n) $ \p -> do
  sequence_ [ pokeByteOff p (16 * k) v >> pokeByteOff p (16 * k + 8) i
            | (k, (v, i)) <- zip [0 ..] rs ]
  act (fromIntegral n) (castPtr p)
  where n = length rs

-- | Runs an engine call; a failure is a 'DualRevError' naming the call and
-- the engine's message.
engine :: String -> IO CInt -> IO ()
engine fn call = do
  st <- call
  when (st /= 0) $ do
    msg <- c_strerror st >>= peekCString
    throwIO (DualRevError ("dualrev: " ++ fn ++ " failed: " ++ msg))

-- | Run with a pooled tape set to order 2 (second derivatives), and back
-- to order 1 before it goes back to the pool (a cleared tape keeps its
-- order): a product in a loop records into memory it had before, as a
-- gradient does.
withOrder2Tape :: (Ptr CTape -> IO a) -> IO a
withOrder2Tape act = withPooledTape $ \t -> do
  engine "dr_tape_set_order" (c_tape_set_order t 2)
  r <- act t
  engine "dr_tape_set_order" (c_tape_set_order t 1)
  pure r

-- | m rows of n.
rowsOf :: Int -> Int -> [e] -> [[e]]
rowsOf m n xs = [take n (drop (k * n) xs) | k <- [0 .. m - 1]]

------------------------------------------------------------------------------
-- Runners

-- | One row per scalar of the output, left to right, each shaped like the
-- input: the engine's Jacobian, which sweeps forward (one sweep per block
-- of input directions) when the output has more scalars than the input and
-- in reverse otherwise.
jacobianRun :: Trav a -> (Supply -> a -> IO a') -> (Ptr CTape -> b' -> [R] -> IO [R])
            -> (a' -> AD b') -> a -> [a]
jacobianRun trav ins outs f x = unsafeDupablePerformIO $ withPooledTape $ \t -> do
  (n, first, y') <- record trav ins f t x
  yr <- outs t y' []
  -- the inputs are the range first .. first+n-1 (as 'record' made them):
  -- one call on the range, and each row read from its place in one buffer
  withReals yr $ \cm py -> allocaArray (max 1 (fromIntegral cm * n)) $ \p -> do
    engine "dr_jacobian" $ quickOrSafe (c_jacobian_range_quick t cm py first (fromIntegral n) p)
                                       (c_jacobian_range_safe t cm py first (fromIntegral n) p)
    forM [0 .. fromIntegral cm - 1] $ \r -> fromBuffer trav x n (p `plusPtr` (8 * r * n))
{-# INLINE jacobianRun #-}

-- | Value and directional derivative J v, shaped like the output.
jvpRun :: Trav a -> (Supply -> a -> IO a') -> (Ptr CTape -> b' -> [R] -> IO [R])
       -> (Ptr CTape -> b' -> IO b) -> Trav b -> (a' -> AD b') -> a -> a -> (b, b)
jvpRun trav ins outs prim travB f x v = unsafeDupablePerformIO $ withPooledTape $ \t -> do
  (_, first, y') <- record trav ins f t x
  xr <- inputReals trav x first
  vs <- direction trav xr v
  yr <- outs t y' []
  y <- prim t y'
  yd <- withReals yr $ \cm py -> withReals xr $ \cn px -> withArray vs $ \pv ->
    resultAs travB y (length yr) $ \p -> engine "dr_jvp" $
      quickOrSafe (c_jvp_quick t cm py cn px pv p) (c_jvp t cm py cn px pv p)
  pure (y, yd)
{-# INLINE jvpRun #-}

-- | The value and the directional derivatives along k directions, from one
-- recording and one forward sweep that carries the k tangents side by side
-- (dr_jvp_vec): the directions, n scalars each, as the columns of an n x k
-- row-major matrix, and the output's k tangents read back by column.
jvpsRun :: Trav a -> (Supply -> a -> IO a') -> (Ptr CTape -> b' -> [R] -> IO [R])
        -> (Ptr CTape -> b' -> IO b) -> Trav b -> (a' -> AD b') -> a -> [a] -> (b, [b])
jvpsRun trav ins outs prim travB f x vs = unsafeDupablePerformIO $ withPooledTape $ \t -> do
  (_, first, y') <- record trav ins f t x
  xr <- inputReals trav x first
  ds <- mapM (direction trav xr) vs
  yr <- outs t y' []
  y <- prim t y'
  let k = length ds
      m = length yr
      ck = fromIntegral k
  yds <- withReals yr $ \cm py -> withReals xr $ \cn px -> withArray (concat (transpose ds)) $ \pv ->
    allocaArray (max 1 (m * k)) $ \pd -> do
      when (k > 0) $ engine "dr_jvp_vec" $
        quickOrSafe (c_jvp_vec_quick t cm py cn px ck pv pd) (c_jvp_vec t cm py cn px ck pv pd)
      forM [0 .. k - 1] $ \j -> resultAs travB y m $ \p ->
        mapM_ (\i -> peekElemOff pd (i * k + j) >>= pokeElemOff p i) [0 .. m - 1]
  pure (y, yds)
{-# INLINE jvpsRun #-}

-- | The Gauss-Newton product J^T J v of the output scalars (residuals),
-- shaped like the input: one forward and one reverse sweep.
gnvpRun :: Trav a -> (Supply -> a -> IO a') -> (Ptr CTape -> b' -> [R] -> IO [R])
        -> (a' -> AD b') -> a -> a -> a
gnvpRun trav ins outs f x v = unsafeDupablePerformIO $ withPooledTape $ \t -> do
  (_, first, y') <- record trav ins f t x
  xr <- inputReals trav x first
  vs <- direction trav xr v
  yr <- outs t y' []
  withReals yr $ \cm py -> withReals xr $ \cn px -> withArray vs $ \pv ->
    resultAs trav x (length xr) (engine "dr_gnvp" . c_gnvp t cm py cn px pv)
{-# INLINE gnvpRun #-}

-- | Hessian times a direction, shaped like the input, with the walks of
-- 'Numeric.DualRev.grad': the input's nodes as 'grad' makes them (an
-- array input stays one array node), the direction seeded on them as a
-- cotangent is, one product (dr_hvp_inputs, which reads the seeds as the
-- direction and leaves H v in the adjoints), and H v read as the gradient
-- is: an array's direction and product are copied whole.
hvpRun :: (Ptr CTape -> a -> IO a') -> (Ptr CTape -> a' -> a -> IO ())
       -> (Ptr CTape -> a -> a' -> IO (IO a)) -> (a' -> AD D) -> a -> a -> a
hvpRun inp seed col f x v = unsafeDupablePerformIO $ withOrder2Tape $ \t -> do
  x' <- inp t x
  readOut <- col t x x'
  D yv yi <- unAD (f x') t
  checkTape t
  engine "dr_adjoints_clear" (c_adjoints_clear t)
  let shape = throwIO (DualRevError "dualrev: the direction must have the input's shape (lists of the same lengths, arrays of the same shapes, the same constructors)")
  -- (the seed walks say "cotangent" and "output": what they were made for)
  seed t x' v `catches` [Handler (\(DualRevError _) -> shape), Handler (\e -> const shape (e :: IOException))]
  engine "dr_hvp" (quickOrSafe (c_hvp_inputs_quick t yv yi) (c_hvp_inputs t yv yi))
  readOut
{-# INLINE hvpRun #-}

-- | The entries of a dr_sparse, row by row: ((row, column), value).
sparseEntries :: Ptr CSparse -> IO [((Int, Int), Double)]
sparseEntries sp = do
  rows <- peekByteOff sp 0 :: IO CSize
  rowptr <- peekByteOff sp 24 :: IO (Ptr CSize)
  colind <- peekByteOff sp 32 :: IO (Ptr CSize)
  val <- peekByteOff sp 40 :: IO (Ptr Double)
  fmap concat $ forM [0 .. fromIntegral rows - 1] $ \r -> do
    a <- peekElemOff rowptr r
    b <- peekElemOff rowptr (r + 1)
    forM [fromIntegral a .. fromIntegral b - 1] $ \k -> do
      c <- peekElemOff colind k
      v <- peekElemOff val k
      pure ((r, fromIntegral c), v)

-- | Run an engine call that fills a dr_sparse, and read its entries (the
-- library's memory freed whatever happens).
withSparse :: String -> (Ptr CSparse -> IO CInt) -> IO [((Int, Int), Double)]
withSparse fn call = allocaBytes 48 $ \sp -> do
  mapM_ (\k -> pokeByteOff sp (8 * k) (0 :: Word)) [0 .. 5]
  (engine fn (call sp) >> sparseEntries sp) `finally` c_sparse_free sp

-- | The nonzero entries of the Jacobian, ((output scalar, input scalar),
-- value), both numbered left to right from 0, row by row.
sparseJacobianRun :: Trav a -> (Supply -> a -> IO a') -> (Ptr CTape -> b' -> [R] -> IO [R])
                  -> (a' -> AD b') -> a -> [((Int, Int), Double)]
sparseJacobianRun trav ins outs f x = unsafeDupablePerformIO $ withPooledTape $ \t -> do
  (_, first, y') <- record trav ins f t x
  yr <- outs t y' []
  xr <- inputReals trav x first
  withReals yr $ \cm py -> withReals xr $ \cn px ->
    withSparse "dr_sparse_jacobian" (c_sparse_jacobian t cm py cn px)

-- | The nonzero entries of the (symmetric) Hessian, both triangles,
-- ((input scalar, input scalar), value), row by row.
sparseHessianRun :: Trav a -> (Supply -> a -> IO a') -> (a' -> AD D) -> a -> [((Int, Int), Double)]
sparseHessianRun trav ins f x = unsafeDupablePerformIO $ withOrder2Tape $ \t -> do
  (_, first, D yv yi) <- record trav ins f t x
  xr <- inputReals trav x first
  withReals xr $ \cn px -> withSparse "dr_sparse_hessian" (c_sparse_hessian t yv yi cn px)

-- | The rows of the Hessian, each shaped like the input.
hessianRun :: Trav a -> (Supply -> a -> IO a') -> (a' -> AD D) -> a -> [a]
hessianRun trav ins f x = unsafeDupablePerformIO $ withOrder2Tape $ \t -> do
  (n, first, D yv yi) <- record trav ins f t x
  xr <- inputReals trav x first
  withReals xr $ \cn px -> allocaArray (max 1 (n * n)) $ \p -> do
    engine "dr_hessian" (c_hessian t yv yi cn px p)
    forM [0 .. n - 1] $ \r -> fromBuffer trav x n (p `plusPtr` (8 * r * n))
{-# INLINE hessianRun #-}
