{-# LANGUAGE TemplateHaskell #-}
-- | Vec and Mat to and from Data.Vector.Storable: the elements survive a
-- round trip, the storage is shared (the same address on both sides, also
-- for a slice), a misaligned vector is copied, a wrong length is a shape
-- error, and a converted vector is a gradient input like any other.
module Storable (spec) where

import Control.Exception (evaluate, try)
import qualified Data.Vector.Storable as VS
import Data.Word (Word8)
import Foreign.Ptr (Ptr)
import Test.Hspec
import Test.QuickCheck

import Numeric.DualRev
import Numeric.DualRev.Array

differentiable [d|
  sumSquares :: (Vec, Mat) -> Double
  sumSquares (v, m) = vsum (vsquare v) + msumAll (msquare m)
  |]

address :: VS.Vector Double -> IO (Ptr Double)
address v = VS.unsafeWith v pure

spec :: Spec
spec = describe "Data.Vector.Storable conversions" $ do
  it "round trips keep the elements" $
    property $ \xs -> forAll (choose (0, 4)) $ \r ->
      let rs = take r (chunks (cycle (0.5 : xs)))
          chunks zs = let (a, b) = splitAt 3 zs in a : chunks b
      in vtoList (vecFromStorable (VS.fromList xs)) === xs
         .&&. VS.toList (vecToStorable (vfromList xs)) === xs
         .&&. toRows (matFromStorable r 3 (VS.fromList (concat rs))) === rs
         .&&. VS.toList (matToStorable (fromRows rs)) === concat rs

  it "shares the storage: no copy either way" $ do
    let v = VS.fromList [1 .. 10 :: Double]
        s = VS.slice 3 4 v
    a <- address v
    a' <- address (vecToStorable (vecFromStorable v))
    a' `shouldBe` a
    b <- address s
    b' <- address (vecToStorable (vecFromStorable s))
    b' `shouldBe` b
    c' <- address (matToStorable (matFromStorable 2 5 v))
    c' `shouldBe` a
    let m = fromRows [[1, 2], [3, 4]]
    d <- address (matToStorable m)
    d' <- address (matToStorable (matFromStorable 2 2 (matToStorable m)))
    d' `shouldBe` d

  it "copies a vector that is not aligned for Double" $ do
    let bytes = VS.unsafeCast (VS.fromList [1.5, 2.5 :: Double]) :: VS.Vector Word8
        odd' = VS.unsafeCast (VS.slice 1 16 (VS.cons 0 bytes)) :: VS.Vector Double
        v = vecFromStorable odd'
    vtoList v `shouldBe` VS.toList odd'
    a <- address odd'
    a' <- address (vecToStorable v)
    a' `shouldNotBe` a

  it "Vec's == is that of its elements' list (a NaN equal to nothing)" $
    forAll (listOf eqPick) $ \xs -> forAll (oneof [pure xs, listOf eqPick]) $ \ys ->
      (vfromList xs == vfromList ys) === (xs == ys)

  it "Mat's == is that of its elements' rows" $
    forAll (vectorOf 6 eqPick) $ \xs -> forAll (oneof [pure xs, vectorOf 6 eqPick]) $ \ys ->
      let m zs = fromRows [take 3 zs, drop 3 zs]
      in (m xs == m ys) === (xs == ys)

  it "Mats of other shapes differ" $
    fromRows [[1, 2, 3]] `shouldNotBe` fromRows [[1], [2], [3]]

  it "a length that is not rows * cols is a shape error" $ do
    r <- try (evaluate (matFromStorable 2 3 (VS.fromList [1 .. 5])))
    case r of
      Left (DualRevError msg) -> msg `shouldContain` "shape"
      Right _ -> expectationFailure "no error"

  it "converted arrays are gradient inputs" $ do
    let v = vecFromStorable (VS.fromList [1, 2, 3])
        m = matFromStorable 1 2 (VS.fromList [4, 5])
        (gv, gm) = $(grad 'sumSquares) (v, m)
    vtoList gv `shouldBe` [2, 4, 6]
    toRows gm `shouldBe` [[8, 10]]

-- | Elements for comparisons: both zeros, and a NaN (a list holding one
-- is compared with itself half the time).
eqPick :: Gen Double
eqPick = elements [0, -0, 1, 2.5, 0 / 0]
