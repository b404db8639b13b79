{-# LANGUAGE OverloadedStrings, ScopedTypeVariables #-}
-- | GradBench's protocol: one JSON message a line on stdin, one response a
-- line on stdout (gradbench/README.md).
module Protocol (serve) where

import Control.DeepSeq (NFData, force)
import Control.Exception (SomeException, evaluate, try, displayException)
import qualified Data.Aeson as A
import qualified Data.Aeson.Encoding as E
import qualified Data.Aeson.KeyMap as KM
import Data.Aeson.Types (parseEither)
import qualified Data.ByteString.Char8 as B
import qualified Data.ByteString.Lazy.Char8 as BL
import Data.Char (isSpace)
import Data.Maybe (fromMaybe)
import Data.Word (Word64)
import GHC.Clock (getMonotonicTimeNSec)
import System.IO

import Eval

-- | Answers messages until "end" or the end of the input, with the tool's
-- name and its evals' functions by module and name.
serve :: String -> [(String, [(String, Function)])] -> IO ()
serve tool evals = do
  hSetBuffering stdout (BlockBuffering Nothing)
  hSetBinaryMode stdin True
  let loop = do
        eof <- isEOF
        if eof then pure () else do
          line <- B.getLine
          if B.all isSpace line then loop else do
            r <- respond tool evals line
            case r of
              Nothing -> pure ()
              Just enc -> do
                BL.putStrLn (E.encodingToLazyByteString enc)
                hFlush stdout
                loop
  loop

-- | The response to one line: Nothing for "end".  The keys are written in
-- the order of the C tool's responses, id first.
respond :: String -> [(String, [(String, Function)])] -> B.ByteString -> IO (Maybe E.Encoding)
respond tool evals line = case A.eitherDecodeStrict line of
  Left err -> pure (Just (failure A.Null ("malformed JSON: " ++ err)))
  Right (A.Object msg) -> do
    let ident = fromMaybe A.Null (KM.lookup "id" msg)
        str k = case KM.lookup k msg of
                  Just (A.String s) -> Just (A.fromJSON (A.String s))
                  _ -> Nothing
        text k = case str k of
                   Just (A.Success s) -> Just (s :: String)
                   _ -> Nothing
    case text "kind" of
      Nothing -> pure (Just (failure ident "the field \"kind\" must be a string"))
      Just "start" -> pure (Just (E.pairs ("id" A..= ident <> "tool" A..= tool)))
      Just "define" -> pure . Just $ case text "module" of
        Nothing -> failure ident "define: the field \"module\" must be a string"
        Just m | m `elem` map fst evals -> E.pairs ("id" A..= ident <> "success" A..= True)
               | otherwise -> failure ident (tool ++ " does not implement the eval \"" ++ m ++ "\"")
      Just "evaluate" -> Just <$> case (text "module", text "function") of
        (Just m, Just f) -> case lookup m evals >>= lookup f of
          Nothing -> pure (failure ident (tool ++ " has no function \"" ++ f ++ "\" in \"" ++ m ++ "\""))
          Just fun -> evaluateMsg ident fun (KM.lookup "input" msg)
        _ -> pure (failure ident "evaluate: the fields \"module\" and \"function\" must be strings")
      Just "analysis" -> pure (Just (E.pairs ("id" A..= ident)))
      Just "end" -> pure Nothing
      Just k -> pure (Just (failure ident ("unknown message kind \"" ++ k ++ "\"")))
  Right _ -> pure (Just (failure A.Null "a message must be a JSON object"))

-- | aeson's message without its path prefix ("Error in $: "), which
-- says nothing where the input is one object
cleanParseError :: String -> String
cleanParseError err = case break (== ':') err of
  (pre, ':' : ' ' : rest) | take 8 pre == "Error in" -> rest
  _ -> err

failure :: A.Value -> String -> E.Encoding
failure ident err = E.pairs ("id" A..= ident <> "success" A..= False <> "error" A..= err)

-- | Runs the function min_runs times and for min_seconds in all (where
-- given), timing each run.
evaluateMsg :: A.Value -> Function -> Maybe A.Value -> IO E.Encoding
evaluateMsg ident _ Nothing = pure (failure ident "evaluate: the field \"input\" is missing")
evaluateMsg ident (Function parse f out) (Just input) =
  case (,) <$> parseEither (limits "min_runs" 1) input <*> parseEither (limits "min_seconds" 0) input of
    Left _ -> pure (failure ident "evaluate: \"min_runs\" and \"min_seconds\" must be numbers")
    Right (runs :: Double, secs :: Double)
      | not (runs >= 1 && runs <= 1e9 && secs >= 0 && secs <= 1e6) ->
          pure (failure ident "evaluate: \"min_runs\" must be from 1 to 1e9, \"min_seconds\" from 0 to 1e6")
      | otherwise -> case parseEither parse input of
          Left err -> pure (failure ident (cleanParseError err))
          Right a0 -> do
            r <- try $ do
              a <- evaluate (force a0)
              let go n spent ts = do
                    t0 <- getMonotonicTimeNSec
                    b <- runOnce f a
                    t1 <- getMonotonicTimeNSec
                    let ts' = (t1 - t0) : ts
                        spent' = spent + (t1 - t0)
                    if n + 1 >= runs && fromIntegral spent' / 1e9 >= secs
                      then pure (reverse ts', b)
                      else go (n + 1) spent' ts'
              go (0 :: Double) (0 :: Word64) []
            pure $ case r of
              Left e -> failure ident (displayException (e :: SomeException))
              Right (ts, b) -> case out b of
                Left err -> failure ident err
                Right v -> E.pairs ("id" A..= ident <> "success" A..= True <> "output" `E.pair` v
                                    <> "timings" A..= map timing ts)
  where
    -- an input that is no object (hello's) has neither
    limits k d (A.Object o) = maybe (pure d) A.parseJSON (KM.lookup k o)
    limits _ d _ = pure d
    timing t = A.object ["name" A..= ("evaluate" :: String), "nanoseconds" A..= t]

-- | One run, its result forced whole.  Not inlined, so that f a is a new
-- thunk at every call: GHC cannot share one run's result with the next.
runOnce :: NFData b => (a -> b) -> a -> IO b
runOnce f a = evaluate (force (f a))
{-# NOINLINE runOnce #-}
