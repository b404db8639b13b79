-- | The array functions of ordinary code: each runs its dual operation
-- ("Numeric.DualRev.Internal.Run.ArrayDual") on a temporary tape, so the
-- value computed outside and inside differentiable code is that of one C
-- kernel.  The front end's table of primitives maps each of these names to
-- its dual operation.
module Numeric.DualRev.Internal.Run.Array
  ( -- * Vectors
    Vec, fromList, toList, vlength, index
  , vadd, vsub, vmul, vdiv, vscale
  , vneg, vabs, vsqrt, vexp, vlog, vsin, vcos, vtanh, vsigmoid, vrelu, vsquare
  , dot, vsum, vmaximum, logSumExp, softmax, logSoftmax
  , vslice, vconcat, gather, scatter
    -- * Matrices
  , Mat, fromRows, toRows, rows, cols, index2
  , madd, msub, mmul, mdiv, mscale
  , mneg, mabs, msqrt, mexp, mlog, msin, mcos, mtanh, msigmoid, mrelu, msquare
  , matVec, vecMat, matMul, matMulT, outer, transpose
  , msum, mmaximum, sumRows, sumCols, softmaxRows, logSoftmaxRows, logSumExpRows
  , addRowVec, addColVec, replicateRows, replicateCols
  , reshape, flatten, mslice, block, vstack, hstack, gatherRows, scatterRows
  ) where

import Foreign.Marshal.Array (pokeArray)
import System.IO.Unsafe (unsafeDupablePerformIO)

import Numeric.DualRev.Internal.Run.ArrayCarrier
import Numeric.DualRev.Internal.Run.ArrayData
import Numeric.DualRev.Internal.Run.ArrayDual

-- | A vector holding the list's elements.
fromList :: [Double] -> Vec
fromList xs = unsafeDupablePerformIO $ do
  let n = length xs
  Vec n <$> newBuf n (\p -> pokeArray p xs)

toList :: Vec -> [Double]
toList = vecElems

vlength :: Vec -> Int
vlength (Vec n _) = n

-- | Element i (from 0).
index :: Vec -> Int -> Double
index = liftP2 indexD

vadd, vsub, vmul, vdiv :: Vec -> Vec -> Vec
vadd = liftP2 vaddD
vsub = liftP2 vsubD
vmul = liftP2 vmulD
vdiv = liftP2 vdivD

-- | Every element times the scalar.
vscale :: Double -> Vec -> Vec
vscale = liftP2 vscaleD

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

dot :: Vec -> Vec -> Double
dot = liftP2 dotD

-- | Sum, largest element (derivative to the first largest), and the stable
-- log (sum (map exp v)).
vsum, vmaximum, logSumExp :: Vec -> Double
vsum = liftP1 vsumD
vmaximum = liftP1 vmaximumD
logSumExp = liftP1 logSumExpD

-- | Numerically stable softmax and log-softmax.
softmax, logSoftmax :: Vec -> Vec
softmax = liftP1 softmaxD
logSoftmax = liftP1 logSoftmaxD

-- | @vslice start len v@: elements start .. start+len-1.
vslice :: Int -> Int -> Vec -> Vec
vslice = liftP3 vsliceD

vconcat :: [Vec] -> Vec
vconcat = liftP1 vconcatD

-- | @gather is v@ = the vector of @v `index` i@ for i in is.
gather :: [Int] -> Vec -> Vec
gather = liftP2 gatherD

-- | @scatter n is v@: a vector of n zeros into which element k of v is added
-- at position is !! k (collisions add).
scatter :: Int -> [Int] -> Vec -> Vec
scatter = liftP3 scatterD

-- | A matrix from its rows (all of one length).
fromRows :: [[Double]] -> Mat
fromRows rs = unsafeDupablePerformIO $ do
  let r = length rs
      c = case rs of { (x : _) -> length x; [] -> 0 }
  if any ((/= c) . length) rs
    then arrayError "fromRows: rows of different lengths"
    else Mat r c <$> newBuf (r * c) (\p -> pokeArray p (concat rs))

toRows :: Mat -> [[Double]]
toRows = matRows

rows, cols :: Mat -> Int
rows (Mat r _ _) = r
cols (Mat _ c _) = c

-- | Element (i, j).
index2 :: Mat -> Int -> Int -> Double
index2 = liftP3 index2D

madd, msub, mmul, mdiv :: Mat -> Mat -> Mat
madd = liftP2 maddD
msub = liftP2 msubD
mmul = liftP2 mmulD
mdiv = liftP2 mdivD

mscale :: Double -> Mat -> Mat
mscale = liftP2 mscaleD

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

-- | m v and v^T m.
matVec :: Mat -> Vec -> Vec
matVec = liftP2 matVecD

vecMat :: Vec -> Mat -> Vec
vecMat = liftP2 vecMatD

matMul :: Mat -> Mat -> Mat
matMul = liftP2 matMulD

-- | @matMulT ta a tb b@ = op a * op b, where op transposes if its flag is set
-- (one dgemm, no transposed copy).
matMulT :: Bool -> Mat -> Bool -> Mat -> Mat
matMulT = liftP4 matMulTD

-- | u v^T.
outer :: Vec -> Vec -> Mat
outer = liftP2 outerD

transpose :: Mat -> Mat
transpose = liftP1 transposeD

msum, mmaximum :: Mat -> Double
msum = liftP1 msumD
mmaximum = liftP1 mmaximumD

-- | The vector of row sums (length rows) and of column sums (length cols).
sumRows, sumCols :: Mat -> Vec
sumRows = liftP1 sumRowsD
sumCols = liftP1 sumColsD

-- | Softmax, log-softmax and logsumexp of every row (a batch).
softmaxRows, logSoftmaxRows :: Mat -> Mat
softmaxRows = liftP1 softmaxRowsD
logSoftmaxRows = liftP1 logSoftmaxRowsD

logSumExpRows :: Mat -> Vec
logSumExpRows = liftP1 logSumExpRowsD

-- | The vector added to every row (length cols) / every column (length rows).
addRowVec, addColVec :: Mat -> Vec -> Mat
addRowVec = liftP2 addRowVecD
addColVec = liftP2 addColVecD

-- | @replicateRows r v@: r rows, each v; @replicateCols c v@: c columns, each v.
replicateRows, replicateCols :: Int -> Vec -> Mat
replicateRows = liftP2 replicateRowsD
replicateCols = liftP2 replicateColsD

-- | @reshape r c v@: the elements of v, row by row, as an r x c matrix.
reshape :: Int -> Int -> Vec -> Mat
reshape = liftP3 reshapeD

-- | The elements, row by row.
flatten :: Mat -> Vec
flatten = liftP1 flattenD

-- | @mslice start len m@: rows start .. start+len-1.
mslice :: Int -> Int -> Mat -> Mat
mslice = liftP3 msliceD

-- | @block r0 nr c0 nc m@: the nr x nc block at (r0, c0).
block :: Int -> Int -> Int -> Int -> Mat -> Mat
block = liftP5 blockD

-- | Stacked vertically (equal cols) / side by side (equal rows).
vstack, hstack :: [Mat] -> Mat
vstack = liftP1 vstackD
hstack = liftP1 hstackD

-- | Rows by index, and scatter-add of rows (as 'gather' / 'scatter').
gatherRows :: [Int] -> Mat -> Mat
gatherRows = liftP2 gatherRowsD

scatterRows :: Int -> [Int] -> Mat -> Mat
scatterRows = liftP3 scatterRowsD
