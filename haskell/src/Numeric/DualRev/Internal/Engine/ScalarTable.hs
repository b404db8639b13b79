{-# LANGUAGE TemplateHaskell #-}
{-# OPTIONS_HADDOCK hide #-}
-- | Internal, not a stable API: reads the C engine's table when this
-- package is compiled, to generate its bindings.
--
-- The C engine's table of scalar operations, read when this package is
-- compiled: the @DR_RULES_*@ lists of the rules header name every operation
-- once, with its arity, and the Haskell bindings to its value and recording
-- entry points (@dr_fe_OP@, @dr_fe_OP_rec@ of cbits' frontend.h) are
-- generated from them, so a new operation needs no Haskell binding written
-- by hand.
module Numeric.DualRev.Internal.Engine.ScalarTable
  ( ScalarOp (..)
  , scalarOps
  , scalarImports
  , functionDuals
  , functionPrims
  , rulesHeader
  ) where

import Data.Char (isAlphaNum)
import Data.List (isPrefixOf)
import Language.Haskell.TH
import Language.Haskell.TH.Syntax (addDependentFile, lift, mkNameG_v)

-- | One operation of the table: its C name (@sin@ for @dr_sin@) and arity.
data ScalarOp = ScalarOp { opName :: String, opArity :: Int }

-- | The rules header, relative to the package root (where cabal compiles).
rulesHeader :: FilePath
rulesHeader = "cbits/rules/scalar_rules.h"

-- | The operations of the table, in its order.
scalarOps :: Q [ScalarOp]
scalarOps = do
  addDependentFile rulesHeader
  src <- runIO (readFile rulesHeader)
  let ops = [ ScalarOp n k
            | (list, k) <- [("DR_RULES_UNARY", 1), ("DR_RULES_UNARY_FUSED", 1), ("DR_RULES_BINARY", 2)]
            , n <- entries list (lines src) ]
  if null ops then fail ("no DR_RULES_* lists in " ++ rulesHeader) else pure ops

-- | The names in @X(name)@ of the macro @#define LIST(X) ...@, over its
-- continuation lines.
entries :: String -> [String] -> [String]
entries list ls =
  case dropWhile (not . (("#define " ++ list ++ "(X)") `isPrefixOf`)) ls of
    [] -> []
    (first : rest) -> concatMap names (first : continued first rest)
  where
    continued l more
      | not (null l) && last l == '\\', (m : more') <- more = m : continued m more'
      | otherwise = []
    names s = case s of
      ('X' : '(' : t) | (n, ')' : t') <- span isIdent t -> n : names t'
      (_ : t) -> names t
      [] -> []
    isIdent c = isAlphaNum c || c == '_'

-- | For every operation: @c_fe_OP :: Double -> Double@ (or two arguments),
-- its value, and @c_fe_OP_rec :: Rec1@ (or @Rec2@), which records its node.
-- The types @Rec1@ and @Rec2@ must be in scope where this is spliced.
scalarImports :: Q [Dec]
scalarImports = concatMap binding <$> scalarOps
  where
    binding (ScalarOp n k) =
      [ ForeignD (ImportF CCall Unsafe ("dr_fe_" ++ n) (mkName ("c_fe_" ++ n)) (valueType k))
      , ForeignD (ImportF CCall Unsafe ("dr_fe_" ++ n ++ "_rec") (mkName ("c_fe_" ++ n ++ "_rec"))
                  (ConT (mkName (if k == 1 then "Rec1" else "Rec2")))) ]
    valueType k = foldr (\a r -> AppT (AppT ArrowT a) r) (ConT ''Double) (replicate k (ConT ''Double))

-- | The operations that have a Haskell function in the module imported
-- qualified as @F@ where this is spliced (the public scalar functions
-- beyond the Prelude's), with that function's name.
functionOps :: Q [(ScalarOp, Name)]
functionOps = do
  ops <- scalarOps
  found <- mapM (\op -> lookupValueName ("F." ++ opName op)) ops
  pure [ (op, n) | (op, Just n) <- zip ops found ]

-- | For each such function @OP@, its dual @OPD@, which records the
-- operation's node: @D -> AD D@ (or of two arguments).  'node1', 'node2',
-- 'D' and the bindings of 'scalarImports' must be in scope.
functionDuals :: Q [Dec]
functionDuals = concat <$> (mapM dual =<< functionOps)
  where
    dual (ScalarOp n k, _) = do
      let name = mkName (n ++ "D")
          d = ConT (mkName "D")
          ty = foldr (\a r -> AppT (AppT ArrowT a) r) (AppT (ConT (mkName "AD")) d) (replicate k d)
      args <- mapM (\i -> (,) <$> newName ("a" ++ show i) <*> newName ("x" ++ show i)) [1 .. k]
      let pats = [ AsP a (ConP (mkName "D") [VarP x, WildP]) | (a, x) <- args ]
          value = foldl AppE (VarE (mkName ("c_fe_" ++ n))) [ VarE x | (_, x) <- args ]
          record = VarE (mkName ("c_fe_" ++ n ++ "_rec"))
          body = foldl AppE (VarE (mkName (if k == 1 then "node1" else "node2")))
                   ([record, value] ++ [ VarE a | (a, _) <- args ])
      pure [ SigD name ty
           , FunD name [Clause pats (NormalB body) []]
           , PragmaD (InlineP name Inline FunLike AllPhases) ]

-- | The rows of the table of primitives for those functions: each function
-- is its dual (in the module imported qualified as @FD@), a 'PMon' of its
-- arity.
functionPrims :: Q Exp
functionPrims = ListE <$> (mapM row =<< functionOps)
  where
    row (ScalarOp n k, f) = do
      fd <- maybe (fail ("no dual FD." ++ n ++ "D")) pure =<< lookupValueName ("FD." ++ n ++ "D")
      [| ($(global f), $(conE (mkName "PMon")) $(global fd) k) |]
    -- the same global name where the table is used (a user's module)
    global v = case (namePackage v, nameModule v) of
      (Just p, Just m) -> [| mkNameG_v $(lift p) $(lift m) $(lift (nameBase v)) |]
      _ -> fail ("not a global name: " ++ show v)
