{-# LANGUAGE TemplateHaskell #-}
-- | The eval "lstm" (ADBench's LSTM): l layers of b cells whose weights are
-- diagonal (every gate an affine map of one input entry), run over a
-- sequence of c characters, b bits each, from a given state; the loss is
-- the mean log-likelihood of predicting each next character.  The
-- parameters are main_params (per layer a row of weights and a row of
-- biases, each the four gates forget, input, output, change) and
-- extra_params (the input weights, the output weights, the output biases).
module Lstm (functions, Params, lstm, lstmGrad) where

import Data.Aeson.Types (Parser, Value)
import Data.List (mapAccumL)
import Numeric.DualRev

import Eval

-- | main_params and extra_params: what the gradient is taken in.
type Params = ([[Double]], [[Double]])

differentiable [d|
  lstm :: (Params, Constant ([[Double]], [[Double]])) -> Double
  lstm ((mainParams, extraParams), dat) =
    negate (run (pairs state0) 0 sequ) / fromIntegral ((length sequ - 1) * length wIn)
    where
      (state0, sequ) = constant dat
      [wIn, wOut, bOut] = extraParams
      layers = pairs mainParams
      -- the log-likelihood of each next character, summed
      run st total (x : rest@(next : _)) =
        let (st', y) = step st x
        in run st' (total + sum (zipWith (*) next (logNormalise y))) rest
      run _ total _ = total
      -- one step: the new state of every layer, and the prediction
      step st x =
        let (top, st') = mapAccumL (\inp ((w, bias), (h, c)) -> let hc = cell w bias h c inp in (fst hc, hc))
                                   (zipWith (*) x wIn) (zip layers st)
        in (st', zipWith (\v (wo, bo) -> v * wo + bo) top (zip wOut bOut))

  -- one layer's cells: the new hidden values and cell values
  cell :: [Double] -> [Double] -> [Double] -> [Double] -> [Double] -> ([Double], [Double])
  cell w bias h c x = (zipWith (\o cv -> o * tanh cv) outgate c', c')
    where
      b = length x
      [wf, wi, wo, wc] = chunks b w
      [bf, bi, bo, bc] = chunks b bias
      affine = zipWith3 (\v wv bv -> v * wv + bv)
      forget = map sigmoid (affine x wf bf)
      ingate = map sigmoid (affine h wi bi)
      outgate = map sigmoid (affine x wo bo)
      change = map tanh (affine h wc bc)
      c' = zipWith3 (\cv f (i, ch) -> cv * f + i * ch) c forget (zip ingate change)

  -- y - log (2 + sum (exp y)), ADBench's normalisation
  logNormalise :: [Double] -> [Double]
  logNormalise y = map (\v -> v - lse) y
    where lse = log (2 + sum (map exp y))

  sigmoid :: Double -> Double
  sigmoid v = 1 / (1 + exp (negate v))

  chunks :: Int -> [Double] -> [[Double]]
  chunks n xs = if null xs then [] else take n xs : chunks n (drop n xs)

  -- rows two by two: a layer's (weights, biases) or (hidden, cell)
  pairs :: [[Double]] -> [([Double], [Double])]
  pairs (a : b : rest) = (a, b) : pairs rest
  pairs _ = []
  |]

lstmGrad :: (Params, [[Double]], [[Double]]) -> Params
lstmGrad (p, state, sequ) = fst (lstmTaped (p, Constant (state, sequ)))

-- | Recorded at the first call and replayed at the next ones of the same
-- shape (every run of an evaluate).
lstmTaped :: (Params, Constant ([[Double]], [[Double]])) -> (Params, Constant ([[Double]], [[Double]]))
lstmTaped = $(tapedGrad 'lstm)
{-# NOINLINE lstmTaped #-}

-- | The parameters, the state and the sequence, checked to fit together
-- (the loss needs at least two characters).
input :: Value -> Parser (Params, [[Double]], [[Double]])
input v = do
  mainParams <- field "main_params" v
  extra <- field "extra_params" v
  state <- field "state" v
  sequ <- field "sequence" v
  let l2 = length mainParams
      b = case mainParams of
            (r : _) -> length r `div` 4
            [] -> 0
  if l2 == 0 || odd l2 || b == 0 || any ((/= 4 * b) . length) mainParams
    then fail "lstm: \"main_params\" must have 2 l rows of 4 b numbers"
    else if length extra /= 3 || any ((/= b) . length) extra
    then fail ("lstm: \"extra_params\" must be 3 x " ++ show b)
    else if length state /= l2 || any ((/= b) . length) state
    then fail ("lstm: \"state\" must be " ++ show l2 ++ " x " ++ show b)
    else if length sequ < 2 || any ((/= b) . length) sequ
    then fail ("lstm: \"sequence\" must have at least 2 rows of " ++ show b ++ " numbers")
    else pure ((mainParams, extra), state, sequ)

functions :: [(String, Function)]
functions =
  [ ("objective", function input (\(p, s, q) -> lstm (p, Constant (s, q))) (scalar "lstm"))
  , ("jacobian", function input lstmGrad (\(m, e) -> vector "lstm" (concat m ++ concat e))) ]
