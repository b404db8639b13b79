{-# LANGUAGE TemplateHaskell #-}
{-# OPTIONS_HADDOCK hide #-}
-- | Internal, not a stable API: part of the Template Haskell front end,
-- which GHC runs at compile time.
--
-- Small local functions inlined at their calls, so that arithmetic split
-- over helpers (@add (a, b) (c, d) = (a + c, b + d)@, @scl k (a, b) = (k *
-- a, k * b)@) reaches the transform as whole expressions, which it records
-- as statements ("Numeric.DualRev.Internal.Compile.Statement"):
-- @add p (scl dt v)@ becomes @let (p1, p2) = p; (v1, v2) = v in (p1 + dt *
-- v1, p2 + dt * v2)@, two statements where the calls recorded four nodes.
--
-- Only what cannot change a program's meaning under the transform's
-- call-by-value evaluation: a function of one clause whose patterns are
-- variables, wildcards, tuples and constructors that are their type's only
-- one (patterns that always match), whose body is variables, literals,
-- tuples, constructors and applications (no branch, no binding), and which
-- does not call itself.  Every argument is still evaluated exactly once:
-- one used once in the body moves to its use, which the body always
-- evaluates (it has no branch); any other is bound to a variable first, as
-- the call would have bound it.  A tuple held in a variable is taken apart
-- once however many inlined calls take it apart, so that its parts are the
-- same leaves of a statement.  A @let@ value used once, where it is always
-- evaluated, moves into the arithmetic that uses it ('inlineLet').
module Numeric.DualRev.Internal.Compile.Inline
  ( Inlinable
  , Look (..)
  , inlinable
  , inlinableArity
  , inlineCall
  , inlineLet
  , inlineWithin
  , destructures
  ) where

import Control.Monad (zipWithM)
import Control.Monad.Trans.Class (lift)
import Control.Monad.Trans.State.Strict (StateT, evalStateT, gets, modify')
import qualified Data.Map as M
import Language.Haskell.TH (Name, Pat (..), nameBase, newName)
import Language.Haskell.TH.Syntax (Q)

import Numeric.DualRev.Internal.Compile.Core

-- | A function whose calls may be replaced by its body.
data Inlinable = Inlinable [Pat] Expr

inlinableArity :: Inlinable -> Int
inlinableArity (Inlinable ps _) = length ps

-- | The inlinable form of local function @f@'s equations, if it has one,
-- given which constructors are the only one of their type (a pattern of
-- such a constructor always matches, as a tuple's does).
inlinable :: (Name -> Q Bool) -> Name -> [Clause] -> Q (Maybe Inlinable)
inlinable sole f [Clause ps (Plain body) []]
  | not (null ps), all simplePat ps, simple body, f `notElem` exprVars body = do
      ok <- and <$> mapM sole (concatMap patCons ps)
      pure (if ok then Just (Inlinable ps body) else Nothing)
inlinable _ _ _ = pure Nothing

simplePat :: Pat -> Bool
simplePat p = case p of
  VarP _ -> True
  WildP -> True
  TupP qs -> all simplePat qs
  ConP _ qs -> all simplePat qs
  _ -> False

patCons :: Pat -> [Name]
patCons p = case p of
  TupP qs -> concatMap patCons qs
  ConP c qs -> c : concatMap patCons qs
  _ -> []

-- | Variables, literals, tuples, constructors and applications of
-- variables and constructors.
simple :: Expr -> Bool
simple e = case e of
  EVar _ -> True
  ELit _ -> True
  ECon _ -> True
  ETuple es -> all simple es
  EApp (EVar _) as -> all simple as
  EApp (ECon _) as -> all simple as
  _ -> False

-- | A tuple or a constructor applied: its parts, and how to build it again
-- from parts.
built :: Expr -> Maybe ([Expr], [Expr] -> Expr)
built e = case e of
  ETuple es -> Just (es, ETuple)
  EApp (ECon c) as -> Just (as, EApp (ECon c))
  _ -> Nothing

-- | An argument that costs nothing to repeat: a variable, a literal, a
-- negated literal.
duplicable :: Expr -> Bool
duplicable e = case e of
  EVar _ -> True
  ELit _ -> True
  EApp (EVar n) [ELit _] -> n == 'negate
  _ -> False

-- | What is in scope at a call: the inlinable functions, and the
-- variables holding a tuple that a binding in scope already took apart
-- (into these variables), so that a tuple taken apart twice gives the same
-- variables, one leaf in a statement rather than two.
data Look = Look
  { lookFun :: Name -> Maybe Inlinable
  , lookParts :: Name -> Maybe [Name]
  }

-- | The variables a binding made by inlining takes a variable apart into.
destructures :: Bind -> Maybe (Name, [Name])
destructures b = case b of
  BVal (TupP ps) Nothing (Plain (EVar v)) [] | Just xs <- mapM var ps -> Just (v, xs)
  BVal (ConP _ ps) Nothing (Plain (EVar v)) [] | Just xs <- mapM var ps -> Just (v, xs)
  _ -> Nothing
  where
    var (VarP x) = Just x
    var _ = Nothing

-- | Tuples taken apart so far in this inlining.
type Inl = StateT (M.Map Name [Name]) Q

-- | A call of an inlinable function to its arguments (as many as it has
-- patterns): bindings (each of one variable or tuple of variables, in
-- order; the caller evaluates them as a @let@ would) and the expression
-- they scope over.  Calls to inlinable functions among the arguments and in
-- the body are inlined too.
inlineCall :: Look -> Inlinable -> [Expr] -> Q ([Bind], Expr)
inlineCall look i args = evalStateT (call look i args) M.empty

call :: Look -> Inlinable -> [Expr] -> Inl ([Bind], Expr)
call look (Inlinable ps body) args = do
  expanded <- mapM (expand look) args
  let uses = M.fromListWith (+) [(v, 1 :: Int) | v <- exprVars body]
      once x = M.findWithDefault 0 x uses == 1
  matched <- zipWithM (match look once) ps (map snd expanded)
  let binds = concatMap fst expanded ++ concatMap fst matched
      sub = M.fromList (concatMap snd matched)
  (inner, e) <- expand look (substitute sub body)
  pure (binds ++ inner, e)

-- | An expression of variables, literals, tuples and applications with the
-- inlinable calls among its arguments inlined (an arithmetic expression
-- over helpers' results becomes one), or Nothing when it has none.
inlineWithin :: Look -> Expr -> Q (Maybe Expr)
inlineWithin look e
  | simple e && calls e = do
      (binds, core) <- evalStateT (expand look e) M.empty
      pure (Just (foldr (\b x -> ELet [b] x) core binds))
  | otherwise = pure Nothing
  where
    calls x = case x of
      EApp (EVar f) as -> maybe False ((== length as) . inlinableArity) (lookFun look f) || any calls as
      _ | Just (es, _) <- built x -> any calls es
      _ -> False

-- | An argument's bindings and core, with its inlinable calls inlined.
expand :: Look -> Expr -> Inl ([Bind], Expr)
expand look e = case e of
  EApp (EVar f) as | Just i <- lookFun look f, length as == inlinableArity i -> call look i as
  _ | Just (es, rebuild) <- built e -> do
    rs <- mapM (expand look) es
    pure (concatMap fst rs, rebuild (map snd rs))
  EApp (EVar f) as | simple e -> do
    rs <- mapM (expand look) as
    pure (concatMap fst rs, EApp (EVar f) (map snd rs))
  _ -> pure ([], e)

-- | A pattern against an argument: bindings to make first, and what each
-- of the pattern's variables stands for in the body.
match :: Look -> (Name -> Bool) -> Pat -> Expr -> Inl ([Bind], [(Name, Expr)])
match look once p e = case (p, e) of
  (VarP x, _) | duplicable e || (once x && simple e) -> pure ([], [(x, e)])
  (VarP x, _) -> do
    x' <- lift (newName (nameBase x))
    pure ([bind (VarP x') e], [(x, EVar x')])
  (TupP qs, _) -> apart TupP qs
  (ConP c qs, _) -> apart (ConP c) qs
  -- a wildcard: the argument is still evaluated
  (_, _) -> do
    x' <- lift (newName "_unused")
    pure ([bind (VarP x') e], [])
  where
    bind q x = BVal q Nothing (Plain x) []
    parts qs es = do
      rs <- zipWithM (match look once) qs es
      pure (concatMap fst rs, concatMap snd rs)
    -- a tuple or the only constructor of its type, taken apart: its parts
    -- where the argument is built here, else a binding (one per variable)
    apart mk qs = case (built e, e) of
      (Just (es, _), _) | length es == length qs -> parts qs es
      (_, EVar v) -> do
        seen <- gets (M.lookup v)
        case (seen, lookParts look v) of
          (Just vs, _) | length vs == length qs -> parts qs (map EVar vs)
          (_, Just vs) | length vs == length qs -> parts qs (map EVar vs)
          _ -> do
            vs <- fresh qs
            modify' (M.insert v vs)
            (bs, sub) <- parts qs (map EVar vs)
            pure (bind (mk (map VarP vs)) e : bs, sub)
      _ -> do
        vs <- fresh qs
        (bs, sub) <- parts qs (map EVar vs)
        pure (bind (mk (map VarP vs)) e : bs, sub)
    fresh = lift . mapM (const (newName "c"))

-- | @let x = rhs in body@ with @rhs@ moved into @body@, when @x@ occurs in
-- @body@ once, where it is always evaluated (not under a lambda or in a
-- branch), and @rhs@ is arithmetic (with its inlinable calls inlined):
-- evaluated once either way, and now part of the expression around it.
inlineLet :: Look -> Name -> Expr -> Expr -> Q (Maybe Expr)
inlineLet look x rhs body
  | length (filter (== x) (exprVars body)) == 1, x `elem` strictVars body = do
      (binds, core) <- evalStateT (expand look rhs) M.empty
      pure $ if arithmetic core
        then Just (foldr (\b e -> ELet [b] e) (substitute (M.singleton x core) body) binds)
        else Nothing
  | otherwise = pure Nothing

-- | An arithmetic expression, or a tuple of them (its leaves any 'simple'
-- expression).
arithmetic :: Expr -> Bool
arithmetic e = case e of
  _ | Just (es, _) <- built e -> all (\c -> arithmetic c || simple c) es && any arithmetic es
  EApp (EVar o) as -> o `elem` ['(+), '(-), '(*), '(/), 'negate] && all simple as
  _ -> False

-- | The variables an expression always evaluates (call by value): not those
-- under a lambda, in a branch of an @if@ or a @case@, or in a local
-- function's body.
strictVars :: Expr -> [Name]
strictVars e = case e of
  EVar n -> [n]
  ECon _ -> []
  ELit _ -> []
  EApp f as -> strictVars f ++ concatMap strictVars as
  ELam _ _ -> []
  ELet bs b -> concat [strictVars x | BVal _ _ (Plain x) [] <- bs] ++ strictVars b
  EIf c _ _ -> strictVars c
  EMultiIf _ -> []
  ECase s _ -> strictVars s
  ETuple es -> concatMap strictVars es
  EList es -> concatMap strictVars es
  ESig x _ -> strictVars x
  EArith _ -> []
  ERecCon _ fs -> concatMap (strictVars . snd) fs
  ERecUpd x fs -> strictVars x ++ concatMap (strictVars . snd) fs

-- | The expression with its variables in sub replaced (names from quotes
-- are unique: no binder inside can capture what replaces them).
substitute :: M.Map Name Expr -> Expr -> Expr
substitute sub = go
  where
    go e = case e of
      EVar n -> M.findWithDefault e n sub
      ECon _ -> e
      ELit _ -> e
      EApp f as -> EApp (go f) (map go as)
      ELam ps b -> ELam ps (go b)
      ELet bs b -> ELet (map bind bs) (go b)
      EIf a b c -> EIf (go a) (go b) (go c)
      EMultiIf gs -> EMultiIf [(map guard g, go y) | (g, y) <- gs]
      ECase s as -> ECase (go s) [Alt p (body b) (map bind ws) | Alt p b ws <- as]
      ETuple es -> ETuple (map go es)
      EList es -> EList (map go es)
      ESig y t -> ESig (go y) t
      EArith r -> EArith (range r)
      ERecCon c fs -> ERecCon c [(f, go y) | (f, y) <- fs]
      ERecUpd y fs -> ERecUpd (go y) [(f, go z) | (f, z) <- fs]
    body (Plain y) = Plain (go y)
    body (Guarded gs) = Guarded [(map guard g, go y) | (g, y) <- gs]
    guard (GBool y) = GBool (go y)
    guard (GBind p y) = GBind p (go y)
    guard (GLet bs) = GLet (map bind bs)
    bind (BFun n t cs) = BFun n t [Clause ps (body b) (map bind ws) | Clause ps b ws <- cs]
    bind (BVal p t b ws) = BVal p t (body b) (map bind ws)
    range r = case r of
      From a -> From (go a)
      FromThen a b -> FromThen (go a) (go b)
      FromTo a b -> FromTo (go a) (go b)
      FromThenTo a b c -> FromThenTo (go a) (go b) (go c)
