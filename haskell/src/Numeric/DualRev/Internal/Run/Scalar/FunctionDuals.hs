{-# LANGUAGE TemplateHaskell #-}
{-# OPTIONS_HADDOCK hide #-}
-- | Internal, not a stable API: called at run time by the code that the
-- splices generate (so exposed, but hidden from the documentation).
--
-- The duals of "Numeric.DualRev.Internal.Run.Scalar.Functions", generated from the
-- engine's table of operations: @OPD@ records the node of @dr_OP@.
module Numeric.DualRev.Internal.Run.Scalar.FunctionDuals where

import Numeric.DualRev.Internal.Run.Scalar.AD (AD, D (..))
import qualified Numeric.DualRev.Internal.Run.Scalar.Functions as F
import Numeric.DualRev.Internal.Run.Scalar.Ops (node1, node2)
import Numeric.DualRev.Internal.Engine.ScalarFFI
import Numeric.DualRev.Internal.Engine.ScalarTable (functionDuals)

$(functionDuals)
