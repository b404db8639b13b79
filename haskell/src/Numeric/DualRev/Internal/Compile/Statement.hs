{-# LANGUAGE DeriveFunctor #-}
{-# LANGUAGE TemplateHaskell #-}
{-# OPTIONS_HADDOCK hide #-}
-- | Internal, not a stable API: part of the Template Haskell front end,
-- which GHC runs at compile time.
--
-- Arithmetic expressions as statements.  An expression of two or more of
-- @+ - * / negate@ over its leaves (variables, numeric literals, any other
-- expression) is one tape node instead of a node per operation: the
-- transform sees the whole expression at compile time, so it derives the
-- expression's partial with respect to each leaf here, symbolically (a
-- reverse pass over the expression's tree), and the generated code
-- evaluates them with the value and records them in one call.  CoDiPack's
-- expression templates record the same node.
--
-- The value is computed with the same operations in the same order as the
-- operations one by one would compute it, so it is the same to the bit;
-- the partials multiply the same local derivatives (the engine's rules,
-- @cbits/rules/scalar_rules.h@), grouped from the expression's root down,
-- so a gradient agrees with the op-by-op one to rounding.
module Numeric.DualRev.Internal.Compile.Statement
  ( Op (..)
  , Tree (..)
  , arithTree
  , opCount
  , leaves
  , statementBody
  ) where

import Data.Bits (shiftR)
import Data.List (elemIndex, nub)
import Data.Maybe (fromMaybe)
import Data.Word (Word8)
import GHC.Float (castDoubleToWord64)
import Foreign.Ptr (nullPtr)
import GHC.Ptr (Ptr (..))
import Language.Haskell.TH

import Numeric.DualRev.Internal.Compile.Core (Expr (..))
import Numeric.DualRev.Internal.Run.Scalar.AD (D (..))
import Numeric.DualRev.Internal.Run.Scalar.Statement (stmtMaxLeaves, stmtRec, stmtRec2, stmtRec3)

-- | The operations a statement is made of.
data Op = Add | Sub | Mul | Div | Neg
  deriving (Eq, Show)

-- | An arithmetic expression: operations over leaves of type @l@ and
-- numeric literals.
data Tree l = TOp Op [Tree l] | TLit Lit | TLeaf l
  deriving Functor

arity :: Op -> Int
arity Neg = 1
arity _ = 2

-- | The arithmetic tree of an expression, given which names are which
-- operations (the caller resolves names in scope: a user's own @+@ is a
-- leaf's function, not an operation).
arithTree :: (Name -> Q (Maybe Op)) -> Expr -> Q (Tree Expr)
arithTree opOf e = case e of
  EApp (EVar v) args -> do
    mo <- opOf v
    case mo of
      Just o | arity o == length args -> TOp o <$> mapM (arithTree opOf) args
      _ -> pure (TLeaf e)
  ELit l | numericLit l -> pure (TLit l)
  _ -> pure (TLeaf e)
  where
    numericLit l = case l of
      IntegerL _ -> True
      RationalL _ -> True
      _ -> False

opCount :: Tree l -> Int
opCount t = case t of
  TOp _ ts -> 1 + sum (map opCount ts)
  _ -> 0

-- | The leaves, left to right (the order the operations evaluate them in).
leaves :: Tree l -> [l]
leaves t = case t of
  TOp _ ts -> concatMap leaves ts
  TLit _ -> []
  TLeaf l -> [l]

-- | What a node passes down to its arguments: the expression's partial
-- with respect to the node, @1@, @-1@ or an expression (bound to a name).
data Adj = Plus | Minus | Scaled Exp

-- | The statement's code, for a tree whose leaves are already evaluated
-- (atomic expressions of the tree's type @a@), with at most 'stmtMaxLeaves'
-- distinct leaves: the body of @\\toD fromD -> ...@ that 'stmtAt' runs at
-- the dual scalar (@toD@ and @fromD@ convert the leaves and the result).
-- It takes each distinct leaf's value and id, computes the value and the
-- partials, and records through 'stmtRec', which falls back to @byOps@
-- (the operations one by one) where a statement cannot stand for them.
statementBody :: Tree Exp -> Name -> Name -> Exp -> Q Exp
statementBody tree toD fromD byOps = do
  let uniq = nub (leaves tree)
      indexed = fmap (\l -> fromMaybe 0 (elemIndex l uniq)) tree
  xs <- mapM (const (newName "x")) uniq
  is <- mapM (const (newName "i")) uniq
  (fwd, valued) <- forward xs indexed
  (bwd, contribs) <- backward Plus valued
  let root = valueOf valued
  let partial k = case [a | (j, a) <- contribs, j == k] of
        [] -> LitE (RationalL 0)
        as -> foldl1 (\p q -> InfixE (Just p) (VarE '(+)) (Just q)) (map adjExp as)
      -- two or three leaves (one padded to two) take the calls of that
      -- many, the rest the call of stmtMaxLeaves
      (recorder, counted, width) = case length uniq of
        n | n <= 2 -> ('stmtRec2, [], 2)
          | n == 3 -> ('stmtRec3, [], 3)
          | otherwise -> ('stmtRec, [LitE (IntegerL (fromIntegral n))], stmtMaxLeaves)
      pad = replicate (width - length uniq)
                      [LitE (IntegerL (-1)), LitE (RationalL 0), LitE (RationalL 0)]
      args = concat ([[VarE i, partial k, VarE x] | (k, i, x) <- zip3 [0 ..] is xs] ++ pad)
      -- on a tape of order 2 the engine records the statement with its
      -- program where its partials are constants (then it replays as one
      -- node), else it records nothing and byOps runs
      code = case program (length uniq) indexed of
        Just bytes -> AppE (ConE 'Ptr) (LitE (StringPrimL bytes))
        Nothing -> VarE 'nullPtr
      call = foldl AppE (VarE recorder) ([byOps, VarE fromD, root, code] ++ counted ++ args)
      body = LetE (fwd ++ bwd) call
      unpack (l, x, i) inner =
        CaseE (AppE (VarE toD) l) [Match (ConP 'D [VarP x, VarP i]) (NormalB inner) []]
  pure (foldr unpack body (zip3 uniq xs is))

-- | The statement's program, the bytes of @cbits/record/program.h@: its
-- leaves (registers 0 .. n-1), the pairs of leaf masks that make its
-- partials move, its literals (the registers after the
-- leaves, as the Double each is in the generated code), and an
-- instruction per operation, in the order of evaluation; Nothing where it
-- would need more registers than a program has.
program :: Int -> Tree Int -> Maybe [Word8]
program n tree0
  | n > stmtMaxLeaves || n + length lits + length steps > 255 || length pairs > 255 = Nothing
  | otherwise = Just ([byte n, byte (length lits), byte (length steps), byte (length pairs)]
                      ++ concat pairs ++ concatMap bytesLE lits ++ concat steps)
  where
    -- an operation on literals alone is the literal it computes, so that
    -- replay does not compute it again (the same Double arithmetic here
    -- as where the generated code runs)
    tree = folded tree0
    lits = nub [castDoubleToWord64 (litDouble l) | TLit l <- subtrees tree]
    steps = reverse (snd (go tree []))
    -- what makes its partials move (the engine refuses those statements
    -- by these alone): each product's factors' leaves, each quotient's
    -- divisor's
    pairs = nub (movers tree)
    movers t = case t of
      TOp Mul [a, b] | hasLeaves a && hasLeaves b -> [mask a, mask b] : movers a ++ movers b
      TOp Div [a, b] | hasLeaves b -> [0, mask b] : movers a ++ movers b
      TOp _ ts -> concatMap movers ts
      _ -> []
    hasLeaves = not . null . leaves
    mask t = fromIntegral (sum (map (2 ^) (nub (leaves t))) :: Int) :: Word8
    -- the register of a subtree, and the instructions so far (newest first)
    go t acc = case t of
      TLeaf k -> (k, acc)
      TLit l -> (n + fromMaybe 0 (elemIndex (castDoubleToWord64 (litDouble l)) lits), acc)
      TOp o [a] -> emit o a a acc
      TOp o [a, b] -> emit o a b acc
      TOp _ _ -> error "Statement.program: an operation of the wrong arity"
    emit o a b acc =
      let (ra, acc1) = go a acc
          (rb, acc2) = if o == Neg then (0, acc1) else go b acc1
          r = n + length lits + length acc2
      in (r, [opCode o, byte ra, byte rb] : acc2)
    subtrees t = t : case t of
      TOp _ ts -> concatMap subtrees ts
      _ -> []
    byte :: Int -> Word8
    byte = fromIntegral
    bytesLE w = [fromIntegral (w `shiftR` (8 * k)) | k <- [0 .. 7 :: Int]]
    opCode o = case o of
      Add -> 1
      Sub -> 2
      Mul -> 3
      Div -> 4
      Neg -> 5

-- | A tree whose operations on literals alone are literals (of their
-- Double values).
folded :: Tree l -> Tree l
folded t = case t of
  TOp o ts ->
    let ts' = map folded ts
    in case (o, [litDouble l | TLit l <- ts'], length ts') of
         (Neg, [a], 1) | exact (negate a) -> TLit (RationalL (toRational (negate a)))
         (_, [a, b], 2) | exact (arith o a b) -> TLit (RationalL (toRational (arith o a b)))
         _ -> TOp o ts'
  _ -> t
  where
    -- (a literal is a Rational: no NaN, infinity or negative zero)
    exact r = not (isNaN r || isInfinite r || isNegativeZero r)
    arith o a b = case o of
      Add -> a + b
      Sub -> a - b
      Mul -> a * b
      Div -> a / b
      Neg -> negate a

-- | A numeric literal's value where the generated code uses it, at Double.
litDouble :: Lit -> Double
litDouble l = case l of
  IntegerL i -> fromInteger i
  RationalL r -> fromRational r
  _ -> 0

-- | A tree whose operations carry their values (at Double).
data Valued = VLeaf Int Exp | VLit Lit | VOp Op Exp [Valued]

valueOf :: Valued -> Exp
valueOf t = case t of
  VLeaf _ e -> e
  VLit l -> LitE l
  VOp _ v _ -> v

-- | The tree's values: a binding per operation (at Double, the operations
-- the op-by-op code performs), and the tree with them.
forward :: [Name] -> Tree Int -> Q ([Dec], Valued)
forward xs t = case t of
  TLeaf k -> pure ([], VLeaf k (VarE (xs !! k)))
  TLit l -> pure ([], VLit l)
  TOp o ts -> do
    rs <- mapM (forward xs) ts
    v <- newName "v"
    let args = map snd rs
        rhs = case (o, map valueOf args) of
          (Neg, [a]) -> AppE (VarE 'negate) a
          (_, [a, b]) -> InfixE (Just a) (VarE (binop o)) (Just b)
          _ -> error "Statement.forward: an operation of the wrong arity"
    pure (concatMap fst rs ++ [double v rhs], VOp o (VarE v) args)

binop :: Op -> Name
binop o = case o of
  Add -> '(+)
  Sub -> '(-)
  Mul -> '(*)
  Div -> '(/)
  Neg -> 'negate

-- | A binding at Double.
double :: Name -> Exp -> Dec
double n e = ValD (VarP n) (NormalB (SigE e (ConT ''Double))) []

-- | The reverse pass: bindings for the partials passed down, and each
-- leaf's contributions (leaf, partial), in the order of the leaves.
backward :: Adj -> Valued -> Q ([Dec], [(Int, Adj)])
backward g t = case t of
  VLeaf k _ -> pure ([], [(k, g)])
  VLit _ -> pure ([], [])
  VOp o v args -> case (o, args) of
    (Add, [a, b]) -> both g a g b
    (Sub, [a, b]) -> both g a (neg g) b
    (Neg, [a]) -> backward (neg g) a
    -- the mul rule: d(a*b) = b da + a db
    (Mul, [a, b]) -> scaled (valueOf b) (valueOf a) a b
    -- the div rule: d(a/b) = (1/b) da - (v/b) db
    (Div, [a, b]) ->
      let y = valueOf b
      in scaled (InfixE (Just (LitE (RationalL 1))) (VarE '(/)) (Just y))
                (InfixE (Just (AppE (VarE 'negate) v)) (VarE '(/)) (Just y)) a b
    _ -> error "Statement.backward: an operation of the wrong arity"
  where
    both ga a gb b = do
      (da, ca) <- backward ga a
      (db, cb) <- backward gb b
      pure (da ++ db, ca ++ cb)
    -- (no binding for an argument without leaves: it would go unused)
    scaled pa pb a b = do
      (d1, ga) <- if hasLeaf a then times g pa else pure ([], g)
      (d2, gb) <- if hasLeaf b then times g pb else pure ([], g)
      (d3, cs) <- both ga a gb b
      pure (d1 ++ d2 ++ d3, cs)
    hasLeaf t' = case t' of
      VLeaf _ _ -> True
      VLit _ -> False
      VOp _ _ as -> any hasLeaf as

neg :: Adj -> Adj
neg a = case a of
  Plus -> Minus
  Minus -> Plus
  Scaled e -> Scaled (AppE (VarE 'negate) e)

-- | g times a local partial, bound to a name.
times :: Adj -> Exp -> Q ([Dec], Adj)
times g e = do
  n <- newName "g"
  let rhs = case g of
        Plus -> e
        Minus -> AppE (VarE 'negate) e
        Scaled s -> InfixE (Just s) (VarE '(*)) (Just e)
  pure ([double n rhs], Scaled (VarE n))

adjExp :: Adj -> Exp
adjExp a = case a of
  Plus -> LitE (RationalL 1)
  Minus -> LitE (RationalL (-1))
  Scaled e -> e
