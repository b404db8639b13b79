{-# LANGUAGE TemplateHaskell #-}
-- | The front end against the C engine, bit for bit: for every scalar
-- operation, the value and the gradient that @$(grad' 'f)@ gives for a
-- function applying it to its inputs are those of the C API's operation
-- (test/cbits/rules_ref.c), at ordinary and special points (zeros, ties,
-- infinities, NaN, tiny and huge values, domain edges).  NaN equals NaN;
-- otherwise the bits must agree (so 0 and -0 differ).
module Rules where

import Foreign.C.String (CString, withCString)
import Foreign.C.Types (CInt (..))
import Foreign.Marshal.Alloc (alloca)
import Foreign.Ptr (Ptr)
import Foreign.Storable (peek)
import GHC.Float (castDoubleToWord64)
import Numeric (expm1, log1p)
import System.IO.Unsafe (unsafePerformIO)
import Test.Hspec

import Numeric.DualRev
import qualified Numeric.DualRev.Functions as F

foreign import ccall unsafe "rules_ref1"
  c_ref1 :: CString -> Double -> Ptr Double -> Ptr Double -> IO CInt
foreign import ccall unsafe "rules_ref2"
  c_ref2 :: CString -> Double -> CInt -> Double -> CInt -> Ptr Double -> Ptr Double -> Ptr Double -> IO CInt
foreign import ccall unsafe "rules_ref_powi"
  c_refPowi :: Double -> CInt -> Ptr Double -> Ptr Double -> IO CInt

differentiable [d|
  opNeg, opAbs, opSqrt, opExp, opExpm1, opLog, opLog1p :: Double -> Double
  opNeg x = negate x
  opAbs x = abs x
  opSqrt x = sqrt x
  opExp x = exp x
  opExpm1 x = expm1 x
  opLog x = log x
  opLog1p x = log1p x

  opSin, opCos, opTan, opAsin, opAcos, opAtan :: Double -> Double
  opSin x = sin x
  opCos x = cos x
  opTan x = tan x
  opAsin x = asin x
  opAcos x = acos x
  opAtan x = atan x

  opSinh, opCosh, opTanh, opAsinh, opAcosh, opAtanh :: Double -> Double
  opSinh x = sinh x
  opCosh x = cosh x
  opTanh x = tanh x
  opAsinh x = asinh x
  opAcosh x = acosh x
  opAtanh x = atanh x

  opAdd, opSub, opMul, opDiv, opAtan2, opPow, opMin, opMax, opLogBase :: (Double, Double) -> Double
  opAdd (a, b) = a + b
  opSub (a, b) = a - b
  opMul (a, b) = a * b
  opDiv (a, b) = a / b
  opAtan2 (a, b) = atan2 a b
  opPow (a, b) = a ** b
  opMin (a, b) = min a b
  opMax (a, b) = max a b
  opLogBase (a, b) = logBase a b

  -- Numeric.DualRev.Functions
  opCbrt, opErf, opSigmoid, opRelu, opSoftplus :: Double -> Double
  opCbrt x = F.cbrt x
  opErf x = F.erf x
  opSigmoid x = F.sigmoid x
  opRelu x = F.relu x
  opSoftplus x = F.softplus x

  opHypot :: (Double, Double) -> Double
  opHypot (a, b) = F.hypot a b

  -- the same operations with a constant argument
  opSubtract, opRecip, opPowK, opKPow, opAtan2K :: Double -> Double
  opSubtract x = subtract x 3
  opRecip x = recip x
  opPowK x = x ** 2.5
  opKPow x = 2.5 ** x
  opAtan2K x = atan2 x (-1)

  opPowInt :: (Double, Int) -> Double
  opPowInt (x, n) = x ^ n

  opPowIntFrac :: (Double, Int) -> Double
  opPowIntFrac (x, n) = x ^^ n
  |]

-- | Value and gradient of the C API's operation on inputs (a constant where
-- the flag is False).
ref1 :: String -> Double -> (Double, Double)
ref1 name x = unsafePerformIO $ withCString name $ \s -> alloca $ \pv -> alloca $ \pg -> do
  r <- c_ref1 s x pv pg
  if r /= 0 then error ("rules_ref1 " ++ name) else (,) <$> peek pv <*> peek pg

ref2 :: String -> (Double, Bool) -> (Double, Bool) -> (Double, (Double, Double))
ref2 name (a, aa) (b, ba) = unsafePerformIO $ withCString name $ \s ->
  alloca $ \pv -> alloca $ \pa -> alloca $ \pb -> do
    r <- c_ref2 s a (flag aa) b (flag ba) pv pa pb
    if r /= 0 then error ("rules_ref2 " ++ name) else do
      v <- peek pv
      ga <- peek pa
      gb <- peek pb
      pure (v, (ga, gb))
  where flag f = if f then 1 else 0

refPowi :: Double -> Int -> (Double, Double)
refPowi x n = unsafePerformIO $ alloca $ \pv -> alloca $ \pg -> do
  r <- c_refPowi x (fromIntegral n) pv pg
  if r /= 0 then error "rules_ref_powi" else (,) <$> peek pv <*> peek pg

same :: Double -> Double -> Bool
same a b = (isNaN a && isNaN b) || castDoubleToWord64 a == castDoubleToWord64 b

inf, nan :: Double
inf = 1 / 0
nan = 0 / 0

unaryPoints :: [Double]
unaryPoints =
  [ 0, -0, 1, -1, 0.5, -0.5, 2, -3, 20, -20, 30, 710, -745, 1e-8, 0.99999
  , 1 + 2 ^^ (-52 :: Int), 1 - 2 ^^ (-53 :: Int), -1 + 2 ^^ (-53 :: Int)
  , 1e-200, -1e-200, 5e-324, -5e-324, 1e300, -1e300, inf, -inf, nan ]

binaryPoints :: [Double]
binaryPoints = [0, -0, 1, -1, 0.5, 2, -3, 1e-200, 5e-324, 1e300, -1e300, inf, -inf, nan]

-- | The points where the front end and C disagree, shown.
mismatches :: Show p => [(p, [Double], [Double])] -> [String]
mismatches cases =
  [ show p ++ ": front end " ++ show hs ++ ", C " ++ show c
  | (p, hs, c) <- cases, length hs /= length c || not (and (zipWith same hs c)) ]

unary :: String -> (Double -> (Double, Double)) -> Spec
unary name f = it name $ mismatches
  [ (x, [v, g], [cv, cg]) | x <- unaryPoints, let (v, g) = f x, let (cv, cg) = ref1 name x ]
  `shouldBe` []

binary :: String -> ((Double, Double) -> (Double, (Double, Double))) -> Spec
binary name f = it name $ mismatches
  [ ((a, b), [v, ga, gb], [cv, ca, cb])
  | a <- binaryPoints, b <- binaryPoints
  , let (v, (ga, gb)) = f (a, b), let (cv, (ca, cb)) = ref2 name (a, True) (b, True) ]
  `shouldBe` []

-- | One argument of a binary operation constant: what it gives for the other.
withConstant :: String -> (Double -> (Double, Double)) -> (Double -> (Double, Double)) -> Spec
withConstant name f c = it name $ mismatches
  [ (x, [v, g], [cv, cg]) | x <- unaryPoints, let (v, g) = f x, let (cv, cg) = c x ]
  `shouldBe` []

powers :: String -> [Int] -> ((Double, Int) -> (Double, (Double, Int))) -> Spec
powers name ns f = it name $ mismatches
  [ ((x, n), [v, g], [cv, cg])
  | x <- unaryPoints, n <- ns, let (v, (g, _)) = f (x, n), let (cv, cg) = refPowi x n ]
  `shouldBe` []

spec :: Spec
spec = describe "front end and C engine agree bit for bit" $ do
  unary "neg" $(grad' 'opNeg)
  unary "abs" $(grad' 'opAbs)
  unary "sqrt" $(grad' 'opSqrt)
  unary "exp" $(grad' 'opExp)
  unary "expm1" $(grad' 'opExpm1)
  unary "log" $(grad' 'opLog)
  unary "log1p" $(grad' 'opLog1p)
  unary "sin" $(grad' 'opSin)
  unary "cos" $(grad' 'opCos)
  unary "tan" $(grad' 'opTan)
  unary "asin" $(grad' 'opAsin)
  unary "acos" $(grad' 'opAcos)
  unary "atan" $(grad' 'opAtan)
  unary "sinh" $(grad' 'opSinh)
  unary "cosh" $(grad' 'opCosh)
  unary "tanh" $(grad' 'opTanh)
  unary "asinh" $(grad' 'opAsinh)
  unary "acosh" $(grad' 'opAcosh)
  unary "atanh" $(grad' 'opAtanh)
  binary "add" $(grad' 'opAdd)
  binary "sub" $(grad' 'opSub)
  binary "mul" $(grad' 'opMul)
  binary "div" $(grad' 'opDiv)
  binary "atan2" $(grad' 'opAtan2)
  binary "pow" $(grad' 'opPow)
  binary "min" $(grad' 'opMin)
  binary "max" $(grad' 'opMax)
  binary "logbase" $(grad' 'opLogBase)
  unary "cbrt" $(grad' 'opCbrt)
  unary "erf" $(grad' 'opErf)
  unary "sigmoid" $(grad' 'opSigmoid)
  unary "relu" $(grad' 'opRelu)
  unary "softplus" $(grad' 'opSoftplus)
  binary "hypot" $(grad' 'opHypot)
  it "each function of Numeric.DualRev.Functions is the C value outside blocks" $
    mismatches [ (x, [F.softplus x, F.sigmoid x], [fst (ref1 "softplus" x), fst (ref1 "sigmoid" x)])
               | x <- unaryPoints ] `shouldBe` []
  withConstant "subtract x 3 (sub, constant first argument)" $(grad' 'opSubtract)
    (\x -> snd' (ref2 "sub" (3, False) (x, True)))
  withConstant "recip (div, constant first argument)" $(grad' 'opRecip)
    (\x -> snd' (ref2 "div" (1, False) (x, True)))
  withConstant "x ** 2.5 (pow, constant exponent)" $(grad' 'opPowK)
    (\x -> fst' (ref2 "pow" (x, True) (2.5, False)))
  withConstant "2.5 ** x (pow, constant base)" $(grad' 'opKPow)
    (\x -> snd' (ref2 "pow" (2.5, False) (x, True)))
  withConstant "atan2 x (-1) (atan2, constant second argument)" $(grad' 'opAtan2K)
    (\x -> fst' (ref2 "atan2" (x, True) (-1, False)))
  powers "(^) (powi)" [0, 1, 2, 3, 7, 30, 1000] $(grad' 'opPowInt)
  powers "(^^) (powi)" [-1000, -3, -1, 0, 1, 2, 5] $(grad' 'opPowIntFrac)
  where
    fst' (v, (g, _)) = (v, g)
    snd' (v, (_, g)) = (v, g)
