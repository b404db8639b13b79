{-# LANGUAGE TemplateHaskell #-}
{-# OPTIONS_HADDOCK hide #-}
-- | Internal, not a stable API: part of the Template Haskell front end,
-- which GHC runs at compile time.
--
-- Core-to-core desugaring of do blocks and view patterns, for 'Parse'.
--
-- A view pattern cannot stay a Haskell pattern: in transformed code its
-- function is a Kleisli arrow into the tape monad.  So a pattern is matched
-- in two steps, first with each view pattern replaced by a variable, then
-- the views' results against their patterns; an alternative that fails in
-- either step (or in its guards) goes on to the next ones, shared through a
-- local function.
module Numeric.DualRev.Internal.Compile.Desugar
  ( VPat (..), VAlt (..), DoStmt (..)
  , plainVPat, hasViews
  , caseOf, lambdaOf, clausesOf, guardsOf
  , doBlock
  ) where

import Language.Haskell.TH (Lit (..), Name, Pat (..), newName, Q)

import Numeric.DualRev.Internal.Compile.Core
import Numeric.DualRev.Internal.Run.Library.Monads (patFailD)

-- | A pattern whose view patterns became the named variables, with each
-- view: that variable, the view's function and the pattern for its result.
data VPat = VPat Pat [(Name, Expr, VPat)]

-- | A case alternative (pattern, body, where-bindings) with such a pattern.
data VAlt = VAlt VPat Body [Bind]

data DoStmt = DoBind VPat Expr | DoLet [Bind] | DoExpr Expr

plainVPat :: Pat -> VPat
plainVPat p = VPat p []

hasViews :: VPat -> Bool
hasViews (VPat _ vs) = not (null vs)

tupleVPat :: [VPat] -> VPat
tupleVPat [v] = v
tupleVPat vs = VPat (TupP [p | VPat p _ <- vs]) (concat [w | VPat _ w <- vs])

tupleE :: [Expr] -> Expr
tupleE [e] = e
tupleE es = ETuple es

app :: Expr -> Expr -> Expr
app (EApp f as) x = EApp f (as ++ [x])
app f x = EApp f [x]

-- | The views' results, matched against their patterns.
viewScrutinee :: [(Name, Expr, VPat)] -> (Expr, VPat)
viewScrutinee vs = (tupleE [app f (EVar x) | (x, f, _) <- vs], tupleVPat [q | (_, _, q) <- vs])

-- | @case s of alts@.
caseOf :: Expr -> [VAlt] -> Q Expr
caseOf s alts
  | not (any (\(VAlt p _ _) -> hasViews p) alts) = pure (ECase s [Alt p b ws | VAlt (VPat p _) b ws <- alts])
  | otherwise = do
      v <- newName "scrut"
      ELet [BVal (VarP v) Nothing (Plain s) []] <$> chain v (groups alts)

-- | Runs of alternatives without views stay one case; each one with views is
-- a group of its own.
groups :: [VAlt] -> [Either [Alt] VAlt]
groups [] = []
groups (a@(VAlt p _ _) : rest)
  | hasViews p = Right a : groups rest
  | otherwise = let (plain, more) = break (\(VAlt q _ _) -> hasViews q) (a : rest)
                in Left [Alt q b ws | VAlt (VPat q _) b ws <- plain] : groups more

chain :: Name -> [Either [Alt] VAlt] -> Q Expr
chain v [] = pure (ECase (EVar v) [])
chain v [g] = group v g Nothing
chain v (g : gs) = do
  rest <- chain v gs
  k <- newName "next"
  e <- group v g (Just (EApp (EVar k) [ETuple []]))
  pure (ELet [BFun k Nothing [Clause [WildP] (Plain rest) []]] e)

-- | One group, going on to @next@ (if any) when it does not match.
group :: Name -> Either [Alt] VAlt -> Maybe Expr -> Q Expr
group v g next = case g of
  Left alts -> pure (ECase (EVar v) (alts ++ fallback))
  Right (VAlt (VPat p vs) b ws) -> do
    let (s, q) = viewScrutinee vs
    inner <- caseOf s (VAlt q (orElse b) ws : [VAlt (plainVPat WildP) (Plain k) [] | Just k <- [next]])
    pure (ECase (EVar v) (Alt p (Plain inner) [] : fallback))
  where
    fallback = [Alt WildP (Plain k) [] | Just k <- [next]]
    orElse b = case (b, next) of
      (Guarded gs, Just k) -> Guarded (gs ++ [([], k)])
      _ -> b

-- | @\\p1 .. pk -> e@.
lambdaOf :: [VPat] -> Expr -> Q Expr
lambdaOf ps e
  | not (any hasViews ps) = pure (ELam [p | VPat p _ <- ps] e)
  | otherwise = do
      xs <- mapM (const (newName "arg")) ps
      ELam (map VarP xs) <$> caseOf (tupleE (map EVar xs)) [VAlt (tupleVPat ps) (Plain e) []]

-- | The equations of a function: with view patterns, one equation matching
-- its arguments in a case.
clausesOf :: [([VPat], Body, [Bind])] -> Q [Clause]
clausesOf cs
  | not (any (\(ps, _, _) -> any hasViews ps) cs) = pure [Clause [p | VPat p _ <- ps] b ws | (ps, b, ws) <- cs]
  | (ps0, _, _) : _ <- cs = do
      xs <- mapM (const (newName "arg")) ps0
      e <- caseOf (tupleE (map EVar xs)) [VAlt (tupleVPat ps) b ws | (ps, b, ws) <- cs]
      pure [Clause (map VarP xs) (Plain e) []]
  | otherwise = pure []

-- | A pattern guard @p <- e@.
guardsOf :: VPat -> Expr -> [Guard]
guardsOf (VPat p vs) e = GBind p e : concatMap (\(x, f, q) -> guardsOf q (app f (EVar x))) vs

-- | A do block: @p <- e@ binds the rest as a continuation (a pattern that
-- can fail goes to 'fail'), @e@ alone is bound too (so the rest is computed
-- only when the monad goes on, as with Haskell's lazy @(>>)@), and @let@
-- scopes over the rest.  The statements end in an expression (GHC checks).
doBlock :: String -> [DoStmt] -> Q Expr
doBlock failMsg = go
  where
    go [] = pure (ETuple [])
    go [DoExpr e] = pure e
    go (DoExpr e : rest) = bind e . ELam [WildP] <$> go rest
    go (DoLet bs : rest) = ELet bs <$> go rest
    go (DoBind vp@(VPat p _) e : rest) = do
      body <- go rest
      if not (hasViews vp) && irrefutable p
        then pure (bind e (ELam [p] body))
        else do
          x <- newName "bound"
          alt <- caseOf (EVar x)
            [ VAlt vp (Plain body) []
            , VAlt (plainVPat WildP) (Plain (EApp (EVar 'patFailD) [ELit (StringL failMsg)])) [] ]
          pure (bind e (ELam [VarP x] alt))
    bind m k = EApp (EVar '(>>=)) [m, k]

