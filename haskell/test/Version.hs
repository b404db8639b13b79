-- | The version is written twice, where each build system needs it: in
-- dualrev.cabal and in include/dualrev/core.h.  This checks the two agree.
module Version (spec) where

import Data.Version (showVersion)
import Foreign.C.String (CString, peekCString)
import Test.Hspec

import qualified Paths_dualrev

foreign import ccall unsafe "dr_version_string" c_version_string :: IO CString

spec :: Spec
spec = describe "version" $
  it "the package's version is the C library's" $ do
    c <- peekCString =<< c_version_string
    c `shouldBe` showVersion Paths_dualrev.version
