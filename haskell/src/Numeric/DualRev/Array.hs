-- | Vectors and matrices of doubles whose operations are single tape nodes.
--
-- 'Vec' and 'Mat' are immutable arrays.  In ordinary code the functions
-- below compute with the engine's C kernels (OpenBLAS for the products).
-- Inside @differentiable [d| ... |]@ (see "Numeric.DualRev") each of them
-- is a primitive: one call records ONE node on the tape, whatever the size
-- of the arrays, and its reverse rule (the transpose of its derivative) runs
-- in C.  So a layer of a network is a handful of nodes, not one per weight:
--
-- > {-# LANGUAGE TemplateHaskell #-}
-- > import Numeric.DualRev
-- > import Numeric.DualRev.Array
-- >
-- > differentiable [d|
-- >   -- squared error of one dense layer with a tanh
-- >   loss :: ((Mat, Vec), (Vec, Vec)) -> Double
-- >   loss ((w, b), (x, y)) =
-- >     let out = vtanh (vadd (matVec w x) b)
-- >     in vsum (vsquare (vsub out y))
-- >   |]
-- >
-- > main :: IO ()
-- > main = do
-- >   let w = fromRows [[0.1, 0.2], [0.3, 0.4]]
-- >       b = vfromList [0, 0]
-- >       ((gw, gb), _) = $(grad 'loss) ((w, b), (vfromList [1, 2], vfromList [0, 1]))
-- >   print (toRows gw, vtoList gb)
--
-- 'Vec' and 'Mat' may appear anywhere in the input and output of a
-- differentiated function (in tuples, lists, records): the gradient has the
-- input's shape, arrays included.  Converting with 'vtoList' / 'toRows'
-- inside differentiable code records one index node per element;
-- 'vfromList' / 'fromRows' one node in all.
--
-- Naming: functions on vectors start with @v@, those on matrices with @m@
-- (or name the shape: 'fromRows', 'matVec', 'sumRows', ...), so that the
-- module can be imported unqualified next to the Prelude, "Data.List",
-- "Data.Foldable", "Control.Monad" and "Data.Vector".
--
-- Shape errors (adding vectors of different lengths, a product with
-- mismatched dimensions, an index out of range) raise an exception naming
-- the problem ('Numeric.DualRev.DualRevError' for those the engine finds).
--
-- "Data.Vector.Storable" vectors convert to and from 'Vec' and 'Mat'
-- without copying (see the last section), for data loaded by other
-- libraries.
module Numeric.DualRev.Array
  ( -- * Vectors
    Vec
    -- ** Building and reading
  , vfromList, vtoList, vlength, vindex
    -- ** Elementwise
  , vadd, vsub, vmul, vdiv, vscale, vaxpy
  , vneg, vabs, vsqrt, vexp, vlog, vsin, vcos, vtanh, vsigmoid, vrelu, vsquare
    -- ** Reductions
  , vdot, vsum, vmaximum, logSumExp, softmax, logSoftmax
    -- ** Structure
  , vslice, vconcat, gather, scatter
    -- * Matrices
    -- | Row-major.
  , Mat
    -- ** Building and reading
  , fromRows, toRows, mrows, mcols, mindex
    -- ** Elementwise
  , madd, msub, mmul, mdiv, mscale, maxpy
  , mneg, mabs, msqrt, mexp, mlog, msin, mcos, mtanh, msigmoid, mrelu, msquare
    -- ** Products
  , matVec, vecMat, matMul, matMulT, outer, mtranspose
    -- ** Reductions
  , msumAll, mmaximum, sumRows, sumCols, softmaxRows, logSoftmaxRows, logSumExpRows
    -- ** Broadcasting
  , addRowVec, addColVec, replicateRows, replicateCols
    -- ** Structure
  , reshape, mflatten, mslice, block, vstack, hstack, gatherRows, scatterRows
    -- * Data.Vector.Storable
    -- | Conversions in ordinary code, sharing the storage (see each function
    -- for the one case that copies).  They are not primitives of
    -- differentiable code: convert outside the block and pass 'Vec' or
    -- 'Mat' in.
  , vecFromStorable, vecToStorable, matFromStorable, matToStorable
  ) where

import Foreign.Marshal.Array (pokeArray)
import System.IO.Unsafe (unsafeDupablePerformIO)

import Numeric.DualRev.Internal.Run.Array.Carrier
import Numeric.DualRev.Internal.Run.Array.Data
import Numeric.DualRev.Internal.Run.Array.Dual
import Numeric.DualRev.Internal.Run.Array.Storable

-- Each function runs its dual operation ("Internal.Run.Array.Dual") on a
-- temporary tape, so that ordinary and differentiable code compute one
-- value with one C kernel; the front end's table of primitives maps each
-- name here to that operation (those of the primitives follow from their
-- C declarations' comments "Haskell:", tools/gen-arrays.py).

------------------------------------------------------------------------------
-- Vectors: building and reading

-- | The vector of the list's elements.  Inside differentiable code: one tape
-- node for the whole list.
--
-- >>> vfromList [1, 2, 3]
-- vfromList [1.0,2.0,3.0]
vfromList :: [Double] -> Vec
vfromList xs = unsafeDupablePerformIO $ do
  let n = length xs
  Vec n <$> newBuf n (\p -> pokeArray p xs)

-- | The elements as a list.  Inside differentiable code: one index node per
-- element, so prefer the whole-array functions where there is one.
--
-- >>> vtoList (vfromList [1, 2, 3])
-- [1.0,2.0,3.0]
vtoList :: Vec -> [Double]
vtoList = vecElems

-- | The number of elements.
--
-- >>> vlength (vfromList [1, 2, 3])
-- 3
vlength :: Vec -> Int
vlength (Vec n _) = n

-- | Element @i@, counting from 0; an index out of range is an error.
--
-- >>> vindex (vfromList [10, 20, 30]) 1
-- 20.0
vindex :: Vec -> Int -> Double
vindex = liftP2 vindexD

------------------------------------------------------------------------------
-- Vectors: elementwise

-- | Elementwise sum; the lengths must agree.
--
-- >>> vadd (vfromList [1, 2]) (vfromList [10, 20])
-- vfromList [11.0,22.0]
vadd :: Vec -> Vec -> Vec
vadd = liftP2 vaddD

-- | Elementwise difference.
--
-- >>> vsub (vfromList [1, 2]) (vfromList [10, 20])
-- vfromList [-9.0,-18.0]
vsub :: Vec -> Vec -> Vec
vsub = liftP2 vsubD

-- | Elementwise (Hadamard) product.
--
-- >>> vmul (vfromList [1, 2]) (vfromList [10, 20])
-- vfromList [10.0,40.0]
vmul :: Vec -> Vec -> Vec
vmul = liftP2 vmulD

-- | Elementwise quotient.
--
-- >>> vdiv (vfromList [1, 2]) (vfromList [10, 20])
-- vfromList [0.1,0.1]
vdiv :: Vec -> Vec -> Vec
vdiv = liftP2 vdivD

-- | Every element times the scalar (which may itself be differentiated).
--
-- >>> vscale 2 (vfromList [1, 2])
-- vfromList [2.0,4.0]
vscale :: Double -> Vec -> Vec
vscale = liftP2 vscaleD

-- | The function on every element: negation, absolute value, square root,
-- exp, log, sin, cos, tanh, the logistic sigmoid @1 / (1 + exp (-x))@, the
-- rectifier @max 0 x@ and the square.  Each is one tape node.
--
-- >>> vrelu (vfromList [-1, 2])
-- vfromList [0.0,2.0]
-- >>> vsquare (vfromList [-1, 2])
-- vfromList [1.0,4.0]
vneg, vabs, vsqrt, vexp, vlog, vsin, vcos, vtanh, vsigmoid, vrelu, vsquare :: Vec -> Vec
vneg = liftP1 vnegD
vabs = liftP1 vabsD
vsqrt = liftP1 vsqrtD
vexp = liftP1 vexpD
vlog = liftP1 vlogD
vsin = liftP1 vsinD
vcos = liftP1 vcosD
vtanh = liftP1 vtanhD
vsigmoid = liftP1 vsigmoidD
vrelu = liftP1 vreluD
vsquare = liftP1 vsquareD

-- | @vaxpy a x y@: @a@ times @x@ plus @y@ (the lengths agree), one tape
-- node where 'vscale' and 'vadd' make two: a gradient step @vaxpy (-lr) g w@.
--
-- >>> vaxpy 2 (vfromList [1, 2]) (vfromList [10, 20])
-- vfromList [12.0,24.0]
vaxpy :: Double -> Vec -> Vec -> Vec
vaxpy = liftP3 vaxpyD

------------------------------------------------------------------------------
-- Vectors: reductions

-- | The dot (inner) product.
--
-- >>> vdot (vfromList [1, 2, 3]) (vfromList [4, 5, 6])
-- 32.0
vdot :: Vec -> Vec -> Double
vdot = liftP2 vdotD

-- | The sum of the elements.
--
-- >>> vsum (vfromList [1, 2, 3])
-- 6.0
vsum :: Vec -> Double
vsum = liftP1 vsumD

-- | The largest element; its derivative goes to the first largest one.
--
-- >>> vmaximum (vfromList [1, 3, 2])
-- 3.0
vmaximum :: Vec -> Double
vmaximum = liftP1 vmaximumD

-- | @log (sum (map exp v))@, computed without overflow.
--
-- >>> logSumExp (vfromList [1000, 1000])
-- 1000.6931471805599
logSumExp :: Vec -> Double
logSumExp = liftP1 logSumExpD

-- | @exp v / sum (exp v)@, computed without overflow.
--
-- >>> softmax (vfromList [0, 0])
-- vfromList [0.5,0.5]
softmax :: Vec -> Vec
softmax = liftP1 softmaxD

-- | @log (softmax v)@, computed without overflow (the log-probabilities of a
-- classifier).
--
-- >>> logSoftmax (vfromList [0, 0])
-- vfromList [-0.6931471805599453,-0.6931471805599453]
logSoftmax :: Vec -> Vec
logSoftmax = liftP1 logSoftmaxD

------------------------------------------------------------------------------
-- Vectors: structure

-- | @vslice start len v@: the elements @start .. start + len - 1@.
--
-- >>> vslice 1 2 (vfromList [10, 20, 30, 40])
-- vfromList [20.0,30.0]
vslice :: Int -> Int -> Vec -> Vec
vslice = liftP3 vsliceD

-- | The vectors one after another.
--
-- >>> vconcat [vfromList [1], vfromList [2, 3]]
-- vfromList [1.0,2.0,3.0]
vconcat :: [Vec] -> Vec
vconcat = liftP1 vconcatD

-- | @gather is v@: the vector of @vindex v i@ for @i@ in @is@ (indices may
-- repeat).
--
-- >>> gather [2, 0, 0] (vfromList [10, 20, 30])
-- vfromList [30.0,10.0,10.0]
gather :: [Int] -> Vec -> Vec
gather = liftP2 gatherD

-- | @scatter n is v@: @n@ zeros, to which element @k@ of @v@ is added at
-- position @is !! k@ (colliding elements add up); the transpose of 'gather'.
--
-- >>> scatter 3 [2, 0, 2] (vfromList [1, 2, 4])
-- vfromList [2.0,0.0,5.0]
scatter :: Int -> [Int] -> Vec -> Vec
scatter = liftP3 scatterD

------------------------------------------------------------------------------
-- Matrices: building and reading

-- | A matrix from its rows, which must all have one length.  Inside
-- differentiable code: one tape node for the whole matrix.
--
-- >>> fromRows [[1, 2], [3, 4]]
-- fromRows [[1.0,2.0],[3.0,4.0]]
fromRows :: [[Double]] -> Mat
fromRows rs = unsafeDupablePerformIO $ do
  let r = length rs
      c = case rs of { (x : _) -> length x; [] -> 0 }
  if any ((/= c) . length) rs
    then arrayError "fromRows: rows of different lengths"
    else Mat r c <$> newBuf (r * c) (\p -> pokeArray p (concat rs))

-- | The rows as lists.  Inside differentiable code: one index node per
-- element.
--
-- >>> toRows (fromRows [[1, 2], [3, 4]])
-- [[1.0,2.0],[3.0,4.0]]
toRows :: Mat -> [[Double]]
toRows = matRows

-- | The number of rows.
--
-- >>> mrows (fromRows [[1, 2, 3], [4, 5, 6]])
-- 2
mrows :: Mat -> Int
mrows (Mat r _ _) = r

-- | The number of columns.
--
-- >>> mcols (fromRows [[1, 2, 3], [4, 5, 6]])
-- 3
mcols :: Mat -> Int
mcols (Mat _ c _) = c

-- | @mindex m i j@: the element in row @i@, column @j@, counting from 0.
--
-- >>> mindex (fromRows [[1, 2], [3, 4]]) 1 0
-- 3.0
mindex :: Mat -> Int -> Int -> Double
mindex = liftP3 mindexD

------------------------------------------------------------------------------
-- Matrices: elementwise

-- | Elementwise sum; the shapes must agree.
--
-- >>> madd (fromRows [[1, 2]]) (fromRows [[10, 20]])
-- fromRows [[11.0,22.0]]
madd :: Mat -> Mat -> Mat
madd = liftP2 maddD

-- | Elementwise difference.
--
-- >>> msub (fromRows [[1, 2]]) (fromRows [[10, 20]])
-- fromRows [[-9.0,-18.0]]
msub :: Mat -> Mat -> Mat
msub = liftP2 msubD

-- | Elementwise (Hadamard) product; 'matMul' is the matrix product.
--
-- >>> mmul (fromRows [[1, 2]]) (fromRows [[10, 20]])
-- fromRows [[10.0,40.0]]
mmul :: Mat -> Mat -> Mat
mmul = liftP2 mmulD

-- | Elementwise quotient.
--
-- >>> mdiv (fromRows [[1, 2]]) (fromRows [[10, 20]])
-- fromRows [[0.1,0.1]]
mdiv :: Mat -> Mat -> Mat
mdiv = liftP2 mdivD

-- | Every element times the scalar.
--
-- >>> mscale 2 (fromRows [[1, 2]])
-- fromRows [[2.0,4.0]]
mscale :: Double -> Mat -> Mat
mscale = liftP2 mscaleD

-- | @maxpy a x y@: @a@ times @x@ plus @y@ (the shapes agree), one tape
-- node, as 'vaxpy'.
--
-- >>> maxpy 2 (fromRows [[1, 2]]) (fromRows [[10, 20]])
-- fromRows [[12.0,24.0]]
maxpy :: Double -> Mat -> Mat -> Mat
maxpy = liftP3 maxpyD

-- | The function on every element, as for vectors ('vneg' ... 'vsquare').
--
-- >>> mrelu (fromRows [[-1, 2], [3, -4]])
-- fromRows [[0.0,2.0],[3.0,0.0]]
mneg, mabs, msqrt, mexp, mlog, msin, mcos, mtanh, msigmoid, mrelu, msquare :: Mat -> Mat
mneg = liftP1 mnegD
mabs = liftP1 mabsD
msqrt = liftP1 msqrtD
mexp = liftP1 mexpD
mlog = liftP1 mlogD
msin = liftP1 msinD
mcos = liftP1 mcosD
mtanh = liftP1 mtanhD
msigmoid = liftP1 msigmoidD
mrelu = liftP1 mreluD
msquare = liftP1 msquareD

------------------------------------------------------------------------------
-- Matrices: products

-- | The matrix-vector product @m v@ (OpenBLAS dgemv).
--
-- >>> matVec (fromRows [[1, 2], [3, 4]]) (vfromList [1, 1])
-- vfromList [3.0,7.0]
matVec :: Mat -> Vec -> Vec
matVec = liftP2 matVecD

-- | The vector-matrix product @v^T m@.
--
-- >>> vecMat (vfromList [1, 1]) (fromRows [[1, 2], [3, 4]])
-- vfromList [4.0,6.0]
vecMat :: Vec -> Mat -> Vec
vecMat = liftP2 vecMatD

-- | The matrix product (OpenBLAS dgemm).
--
-- >>> matMul (fromRows [[1, 2], [3, 4]]) (fromRows [[0, 1], [1, 0]])
-- fromRows [[2.0,1.0],[4.0,3.0]]
matMul :: Mat -> Mat -> Mat
matMul = liftP2 matMulD

-- | @matMulT ta a tb b@: @op a * op b@, where @op@ transposes its matrix if
-- the flag is set; one dgemm, without a transposed copy.
--
-- >>> matMulT True (fromRows [[1, 2], [3, 4]]) False (fromRows [[1, 0], [0, 1]])
-- fromRows [[1.0,3.0],[2.0,4.0]]
matMulT :: Bool -> Mat -> Bool -> Mat -> Mat
matMulT = liftP4 matMulTD

-- | The outer product @u v^T@.
--
-- >>> outer (vfromList [1, 2]) (vfromList [3, 4, 5])
-- fromRows [[3.0,4.0,5.0],[6.0,8.0,10.0]]
outer :: Vec -> Vec -> Mat
outer = liftP2 outerD

-- | The transpose.
--
-- >>> mtranspose (fromRows [[1, 2, 3], [4, 5, 6]])
-- fromRows [[1.0,4.0],[2.0,5.0],[3.0,6.0]]
mtranspose :: Mat -> Mat
mtranspose = liftP1 mtransposeD

------------------------------------------------------------------------------
-- Matrices: reductions

-- | The sum of all elements.
--
-- >>> msumAll (fromRows [[1, 2], [3, 4]])
-- 10.0
msumAll :: Mat -> Double
msumAll = liftP1 msumAllD

-- | The largest element; its derivative goes to the first largest one, in
-- row-major order.
--
-- >>> mmaximum (fromRows [[1, 5], [3, 4]])
-- 5.0
mmaximum :: Mat -> Double
mmaximum = liftP1 mmaximumD

-- | The vector of the row sums (of length 'mrows').
--
-- >>> sumRows (fromRows [[1, 2], [3, 4]])
-- vfromList [3.0,7.0]
sumRows :: Mat -> Vec
sumRows = liftP1 sumRowsD

-- | The vector of the column sums (of length 'mcols').
--
-- >>> sumCols (fromRows [[1, 2], [3, 4]])
-- vfromList [4.0,6.0]
sumCols :: Mat -> Vec
sumCols = liftP1 sumColsD

-- | 'softmax' of every row (a batch of logits, one example per row).
--
-- >>> softmaxRows (fromRows [[0, 0], [1, 1]])
-- fromRows [[0.5,0.5],[0.5,0.5]]
softmaxRows :: Mat -> Mat
softmaxRows = liftP1 softmaxRowsD

-- | 'logSoftmax' of every row.
--
-- >>> logSoftmaxRows (fromRows [[0, 0]])
-- fromRows [[-0.6931471805599453,-0.6931471805599453]]
logSoftmaxRows :: Mat -> Mat
logSoftmaxRows = liftP1 logSoftmaxRowsD

-- | 'logSumExp' of every row.
--
-- >>> logSumExpRows (fromRows [[0, 0], [1000, 1000]])
-- vfromList [0.6931471805599453,1000.6931471805599]
logSumExpRows :: Mat -> Vec
logSumExpRows = liftP1 logSumExpRowsD

------------------------------------------------------------------------------
-- Matrices: broadcasting

-- | The vector (of length 'mcols') added to every row: a bias added to a
-- batch.
--
-- >>> addRowVec (fromRows [[1, 2], [3, 4]]) (vfromList [10, 20])
-- fromRows [[11.0,22.0],[13.0,24.0]]
addRowVec :: Mat -> Vec -> Mat
addRowVec = liftP2 addRowVecD

-- | The vector (of length 'mrows') added to every column.
--
-- >>> addColVec (fromRows [[1, 2], [3, 4]]) (vfromList [10, 20])
-- fromRows [[11.0,12.0],[23.0,24.0]]
addColVec :: Mat -> Vec -> Mat
addColVec = liftP2 addColVecD

-- | @replicateRows r v@: the matrix of @r@ rows, each @v@.
--
-- >>> replicateRows 2 (vfromList [1, 2])
-- fromRows [[1.0,2.0],[1.0,2.0]]
replicateRows :: Int -> Vec -> Mat
replicateRows = liftP2 replicateRowsD

-- | @replicateCols c v@: the matrix of @c@ columns, each @v@.
--
-- >>> replicateCols 2 (vfromList [1, 2])
-- fromRows [[1.0,1.0],[2.0,2.0]]
replicateCols :: Int -> Vec -> Mat
replicateCols = liftP2 replicateColsD

------------------------------------------------------------------------------
-- Matrices: structure

-- | @reshape r c v@: the elements of @v@, row by row, as an @r@ x @c@
-- matrix; @r * c@ must be the length of @v@.
--
-- >>> reshape 2 2 (vfromList [1, 2, 3, 4])
-- fromRows [[1.0,2.0],[3.0,4.0]]
reshape :: Int -> Int -> Vec -> Mat
reshape = liftP3 reshapeD

-- | The elements, row by row (the inverse of 'reshape').
--
-- >>> mflatten (fromRows [[1, 2], [3, 4]])
-- vfromList [1.0,2.0,3.0,4.0]
mflatten :: Mat -> Vec
mflatten = liftP1 flattenD

-- | @mslice start len m@: the rows @start .. start + len - 1@.
--
-- >>> mslice 1 1 (fromRows [[1, 2], [3, 4]])
-- fromRows [[3.0,4.0]]
mslice :: Int -> Int -> Mat -> Mat
mslice = liftP3 msliceD

-- | @block r0 nr c0 nc m@: the @nr@ x @nc@ block whose top-left element is
-- at row @r0@, column @c0@.
--
-- >>> block 0 2 1 1 (fromRows [[1, 2, 3], [4, 5, 6]])
-- fromRows [[2.0],[5.0]]
block :: Int -> Int -> Int -> Int -> Mat -> Mat
block = liftP5 blockD

-- | The matrices one above another (their column counts agree).
--
-- >>> vstack [fromRows [[1, 2]], fromRows [[3, 4]]]
-- fromRows [[1.0,2.0],[3.0,4.0]]
vstack :: [Mat] -> Mat
vstack = liftP1 vstackD

-- | The matrices side by side (their row counts agree).
--
-- >>> hstack [fromRows [[1], [2]], fromRows [[3], [4]]]
-- fromRows [[1.0,3.0],[2.0,4.0]]
hstack :: [Mat] -> Mat
hstack = liftP1 hstackD

-- | @gatherRows is m@: the rows of @m@ at the indices (as 'gather' does
-- with elements).
--
-- >>> gatherRows [1, 1] (fromRows [[1, 2], [3, 4]])
-- fromRows [[3.0,4.0],[3.0,4.0]]
gatherRows :: [Int] -> Mat -> Mat
gatherRows = liftP2 gatherRowsD

-- | @scatterRows n is m@: @n@ rows of zeros, to which row @k@ of @m@ is
-- added at row @is !! k@ (as 'scatter' does with elements): an embedding
-- table's gradient.
--
-- >>> scatterRows 3 [2, 2] (fromRows [[1, 2], [3, 4]])
-- fromRows [[0.0,0.0],[0.0,0.0],[4.0,6.0]]
scatterRows :: Int -> [Int] -> Mat -> Mat
scatterRows = liftP3 scatterRowsD
