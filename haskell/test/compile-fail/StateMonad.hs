-- EXPECT: the monads of mtl and transformers
-- EXPECT: carry the state as an argument, or as the accumulator of a fold
-- EXPECT: in the definition of `accum' at
{-# LANGUAGE TemplateHaskell #-}
module StateMonad where
import Control.Monad.Trans.State (evalState, get, modify)
import Numeric.DualRev
differentiable [d|
  accum :: [Double] -> Double
  accum xs = evalState (mapM (\x -> modify (+ x)) xs >> get) 0
  |]
