module Main (main) where

import Test.Hspec

import qualified Arithmetic
import qualified Checkpoint
import qualified Comparisons
import qualified Corpus.Api
import qualified Corpus.Bench
import qualified Corpus.Classes
import qualified Corpus.Control
import qualified Corpus.Cross
import qualified Corpus.Data
import qualified Corpus.Extra
import qualified Corpus.Library
import qualified Corpus.Lists
import qualified Corpus.Numeric
import qualified Corpus.Outside
import qualified Corpus.Syntax
import qualified Corpus.Syntax2
import qualified CustomRules
import qualified Fusion
import qualified Inlining
import qualified Nested
import qualified NestedLists
import qualified Overloaded
import qualified Rules
import qualified SecondOrder
import qualified Statement
import qualified Sweeps
import qualified Taped
import qualified Version

main :: IO ()
main = hspec $ do
  Corpus.Numeric.spec
  Corpus.Syntax.spec
  Corpus.Syntax2.spec
  Corpus.Lists.spec
  Corpus.Library.spec
  Corpus.Data.spec
  Corpus.Control.spec
  Corpus.Extra.spec
  Corpus.Bench.spec
  Corpus.Cross.spec
  Corpus.Api.spec
  Corpus.Classes.spec
  Corpus.Outside.spec
  CustomRules.spec
  Fusion.spec
  Checkpoint.spec
  Statement.spec
  Arithmetic.spec
  Comparisons.spec
  Inlining.spec
  Sweeps.spec
  Taped.spec
  Nested.spec
  NestedLists.spec
  Overloaded.spec
  Rules.spec
  SecondOrder.spec
  Version.spec
