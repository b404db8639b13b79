{-# LANGUAGE TemplateHaskell #-}
-- | The eval "hello": a square and its derivative.
module Hello (functions) where

import Data.Aeson (Value (Number))
import Data.Aeson.Types (Parser)
import Data.Scientific (toRealFloat)
import Numeric.DualRev

import Eval

differentiable [d|
  square :: Double -> Double
  square x = x * x
  |]

number :: Value -> Parser Double
number (Number n) = pure (toRealFloat n)
number _ = fail "hello: the input must be a number"

functions :: [(String, Function)]
functions =
  [ ("square", function number square out)
  , ("double", function number $(grad 'square) out) ]
  where out = scalar "hello"
