{-# LANGUAGE ExistentialQuantification #-}
-- | What every eval module gives the protocol: its functions, each a way to
-- read its input, the computation that is timed, and how its result is
-- written back.
module Eval
  ( Function (..)
  , function
  , field
  , output
  , scalar
  , vector
  ) where

import Control.DeepSeq (NFData)
import Data.Aeson (Encoding, FromJSON, ToJSON (toEncoding), Value, withObject, (.:))
import Data.Aeson.Types (Parser)
import qualified Data.Aeson.Key as Key

-- | The input is read (and fully evaluated) once, before the runs, so the
-- timings hold the computation alone, as the C tool's do.  The output is
-- checked finite: JSON has no NaN or infinity.
data Function = forall a b. (NFData a, NFData b) =>
  Function (Value -> Parser a) (a -> b) (b -> Either String Encoding)

function :: (NFData a, NFData b) => (Value -> Parser a) -> (a -> b) -> (b -> Either String Encoding) -> Function
function = Function

-- | One field of the input object.
field :: FromJSON a => String -> Value -> Parser a
field k = withObject "input" (.: Key.fromString k)

-- | The output as JSON, refused where one of its numbers is not finite
-- (JSON has no NaN or infinity); the eval's name starts the message.
output :: ToJSON b => String -> (b -> [Double]) -> b -> Either String Encoding
output eval numbers b
  | all (\x -> not (isNaN x || isInfinite x)) (numbers b) = Right (toEncoding b)
  | otherwise = Left (eval ++ ": the result is not finite")

scalar :: String -> Double -> Either String Encoding
scalar eval = output eval pure

vector :: String -> [Double] -> Either String Encoding
vector eval = output eval id
