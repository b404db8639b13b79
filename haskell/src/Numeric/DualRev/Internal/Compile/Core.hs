{-# OPTIONS_HADDOCK hide #-}
-- | Internal, not a stable API: part of the Template Haskell front end,
-- which GHC runs at compile time.
--
-- The small core language the front end works on: what 'Parse' accepts
-- from Template Haskell and what 'Transform' turns into tape-recording code.
-- Operators, sections, @($)@, list comprehensions and parentheses are gone;
-- patterns and types stay Template Haskell's.
module Numeric.DualRev.Internal.Compile.Core
  ( Expr (..), Alt (..), Body (..), Guard (..), Bind (..), Clause (..)
  , Range (..)
  , bindNames, patVars, exprVars, bindVars, irrefutable
  ) where

import Language.Haskell.TH (Lit, Name, Pat (..), Type)

data Expr
  = EVar Name
  | ECon Name
  | ELit Lit
  | EApp Expr [Expr]          -- ^ a function applied to one or more arguments
  | ELam [Pat] Expr
  | ELet [Bind] Expr
  | EIf Expr Expr Expr
  | EMultiIf [([Guard], Expr)]
  | ECase Expr [Alt]
  | ETuple [Expr]
  | EList [Expr]
  | ESig Expr Type
  | EArith Range
  | ERecCon Name [(Name, Expr)]
  | ERecUpd Expr [(Name, Expr)]
  deriving Show

data Range = From Expr | FromThen Expr Expr | FromTo Expr Expr | FromThenTo Expr Expr Expr
  deriving Show

-- | A case alternative: pattern, body, where-bindings.
data Alt = Alt Pat Body [Bind]
  deriving Show

data Body = Plain Expr | Guarded [([Guard], Expr)]
  deriving Show

data Guard = GBool Expr | GBind Pat Expr | GLet [Bind]
  deriving Show

-- | A local or top-level binding: a function (clauses with at least one
-- argument) or a value (a pattern binding), with its signature if any.
data Bind
  = BFun Name (Maybe Type) [Clause]
  | BVal Pat (Maybe Type) Body [Bind]
  deriving Show

data Clause = Clause [Pat] Body [Bind]
  deriving Show

bindNames :: Bind -> [Name]
bindNames (BFun n _ _) = [n]
bindNames (BVal p _ _ _) = patVars p

-- | Patterns that always match (a case needs no fall-through, a do
-- statement no 'fail').
irrefutable :: Pat -> Bool
irrefutable p = case p of
  VarP _ -> True
  WildP -> True
  TildeP _ -> True
  BangP q -> irrefutable q
  ParensP q -> irrefutable q
  AsP _ q -> irrefutable q
  SigP q _ -> irrefutable q
  TupP ps -> all irrefutable ps
  _ -> False

patVars :: Pat -> [Name]
patVars p = case p of
  VarP n -> [n]
  TupP ps -> concatMap patVars ps
  UnboxedTupP ps -> concatMap patVars ps
  ConP _ ps -> concatMap patVars ps
  InfixP a _ b -> patVars a ++ patVars b
  UInfixP a _ b -> patVars a ++ patVars b
  ParensP q -> patVars q
  TildeP q -> patVars q
  BangP q -> patVars q
  AsP n q -> n : patVars q
  RecP _ fs -> concatMap (patVars . snd) fs
  ListP ps -> concatMap patVars ps
  SigP q _ -> patVars q
  ViewP _ q -> patVars q
  _ -> []

-- | Every variable an expression mentions (names from quotes are unique, so
-- this is precise enough for dependency analysis).
exprVars :: Expr -> [Name]
exprVars e = case e of
  EVar n -> [n]
  ECon _ -> []
  ELit _ -> []
  EApp f as -> exprVars f ++ concatMap exprVars as
  ELam _ b -> exprVars b
  ELet bs b -> concatMap bindVars bs ++ exprVars b
  EIf a b c -> concatMap exprVars [a, b, c]
  EMultiIf gs -> concat [concatMap guardVars g ++ exprVars x | (g, x) <- gs]
  ECase s as -> exprVars s ++ concat [bodyVars b ++ concatMap bindVars ws | Alt _ b ws <- as]
  ETuple es -> concatMap exprVars es
  EList es -> concatMap exprVars es
  ESig x _ -> exprVars x
  EArith (From a) -> exprVars a
  EArith (FromThen a b) -> exprVars a ++ exprVars b
  EArith (FromTo a b) -> exprVars a ++ exprVars b
  EArith (FromThenTo a b c) -> concatMap exprVars [a, b, c]
  ERecCon _ fs -> concatMap (exprVars . snd) fs
  ERecUpd x fs -> exprVars x ++ concatMap (exprVars . snd) fs

bodyVars :: Body -> [Name]
bodyVars (Plain e) = exprVars e
bodyVars (Guarded gs) = concat [concatMap guardVars g ++ exprVars x | (g, x) <- gs]

guardVars :: Guard -> [Name]
guardVars (GBool e) = exprVars e
guardVars (GBind _ e) = exprVars e
guardVars (GLet bs) = concatMap bindVars bs

bindVars :: Bind -> [Name]
bindVars (BFun _ _ cs) = concat [bodyVars b ++ concatMap bindVars ws | Clause _ b ws <- cs]
bindVars (BVal _ _ b ws) = bodyVars b ++ concatMap bindVars ws
