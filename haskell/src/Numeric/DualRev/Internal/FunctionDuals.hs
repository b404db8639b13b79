{-# LANGUAGE TemplateHaskell #-}
-- | The duals of "Numeric.DualRev.Internal.Functions", generated from the
-- engine's table of operations: @OPD@ records the node of @dr_OP@.
module Numeric.DualRev.Internal.FunctionDuals where

import Numeric.DualRev.Internal.AD (AD, D (..))
import qualified Numeric.DualRev.Internal.Functions as F
import Numeric.DualRev.Internal.Ops (node1, node2)
import Numeric.DualRev.Internal.ScalarFFI
import Numeric.DualRev.Internal.ScalarTable (functionDuals)

$(functionDuals)
