{-# LANGUAGE TemplateHaskell #-}
{-# OPTIONS_HADDOCK hide #-}
-- | Internal, not a stable API: part of the Template Haskell front end,
-- which GHC runs at compile time.
--
-- From Template Haskell syntax to the core language, rejecting everything
-- outside the supported language with a message that names the construct,
-- the definition it is in and the location of the differentiable block.
module Numeric.DualRev.Internal.Compile.Parse
  ( Ctx (..)
  , showLoc
  , unsupported
  , parseExpr
  , parseLocalDecs
  , parseClauses
  , checkPat
  ) where

import Control.Exception (IOException, catch)
import Control.Monad (forM, unless, when)
import Data.Char (isAlphaNum, isDigit)
import Data.List (foldl')
import qualified Data.Map as M
import Language.Haskell.TH

import Numeric.DualRev.Internal.Compile.Core hiding (Body, Guard, Clause)
import qualified Numeric.DualRev.Internal.Compile.Core as Core
import Numeric.DualRev.Internal.Compile.Desugar

-- | Where we are, for error messages.
data Ctx = Ctx
  { ctxBlock :: String  -- ^ "Foo.hs:12:1"
  , ctxDef :: String    -- ^ the top-level definition being parsed
  }

-- | A splice's location as messages give it: "Foo.hs:12:1".
showLoc :: Loc -> String
showLoc loc = loc_filename loc ++ ":" ++ show (fst (loc_start loc)) ++ ":" ++ show (snd (loc_start loc))

unsupported :: Ctx -> String -> String -> Q a
unsupported ctx what shown = do
  at <- definitionLine ctx
  fail $ "dualrev: unsupported in differentiable code: " ++ what
    ++ (if null shown then "" else "\n    " ++ shown)
    ++ "\n  in the definition of `" ++ ctxDef ctx ++ "'" ++ maybe "" (\l -> " at " ++ l) at
    ++ "\n  in the differentiable block at " ++ ctxBlock ctx

-- | Where the definition being parsed starts in the source ("Foo.hs:10:3"):
-- its first equation after the block's first line (its signature if no
-- equation is found), looked up in the source file, since the syntax a
-- quote gives has no locations.  Nothing where the file cannot be read or
-- the definition is not a plain name.
definitionLine :: Ctx -> Q (Maybe String)
definitionLine ctx = case splitLoc (ctxBlock ctx) of
  Just (file, line) | all isIdentChar name, not (null name) -> do
    src <- runIO (tryRead file)
    pure $ do
      ls <- src
      let numbered = drop (line - 1) (zip [1 :: Int ..] (lines ls))
          starts = [ (n, col, rest) | (n, l) <- numbered
                   , let (ind, body) = span (== ' ') l
                   , Just rest <- [stripName body]
                   , let col = length ind + 1 ]
          equation = [ (n, col) | (n, col, rest) <- starts, not (isSignature rest) ]
          signature = [ (n, col) | (n, col, _) <- starts ]
      (n, col) <- safeHead (equation ++ signature)
      pure (file ++ ":" ++ show n ++ ":" ++ show col)
  _ -> pure Nothing
  where
    name = ctxDef ctx
    stripName body
      | take (length name) body == name
      , rest <- drop (length name) body
      , case rest of { c : _ -> not (isIdentChar c); [] -> False } = Just rest
      | otherwise = Nothing
    isSignature rest = take 2 (dropWhile (== ' ') rest) == "::"
    isIdentChar c = isAlphaNum c || c == '_' || c == '\''
    safeHead xs = case xs of { x : _ -> Just x; [] -> Nothing }
    tryRead f = (Just <$> (readFile f >>= \c -> length c `seq` pure c))
                  `catch` \e -> const (pure Nothing) (e :: IOException)
    splitLoc l = case break (== ':') (reverse l) of
      (_, ':' : rest) -> case break (== ':') rest of
        (lnR, ':' : fileR) | not (null lnR), all isDigit lnR -> Just (reverse fileR, read (reverse lnR))
        _ -> Nothing
      _ -> Nothing

shorten :: String -> String
shorten s = let l = unwords (lines s) in if length l > 120 then take 117 l ++ "..." else l

bad :: Ppr a => Ctx -> String -> a -> Q b
bad ctx what x = unsupported ctx what (shorten (pprint x))

parseExpr :: Ctx -> Exp -> Q Expr
parseExpr ctx ex = case ex of
  VarE n -> pure (EVar n)
  ConE n -> pure (ECon n)
  LitE l -> case l of
    IntegerL _ -> pure (ELit l)
    RationalL _ -> pure (ELit l)
    CharL _ -> pure (ELit l)
    StringL _ -> pure (ELit l)
    _ -> bad ctx "this kind of literal" ex
  AppE _ _ -> do
    let (f, as) = spine ex []
    f' <- parseExpr ctx f
    as' <- mapM (parseExpr ctx) as
    strictOnInfinite ctx ex (mkApp f' as')
  InfixE (Just a) (VarE op) (Just b)
    | op == '($) -> do
        e <- mkApp <$> parseExpr ctx a <*> ((: []) <$> parseExpr ctx b)
        strictOnInfinite ctx ex e
  InfixE (Just a) op (Just b) -> do
    op' <- parseExpr ctx op
    a' <- parseExpr ctx a
    b' <- parseExpr ctx b
    strictOnInfinite ctx ex (mkApp op' [a', b'])
  InfixE (Just a) op Nothing -> do      -- (a `op`): a partial application
    op' <- parseExpr ctx op
    a' <- parseExpr ctx a
    pure (mkApp op' [a'])
  InfixE Nothing op (Just b) -> do      -- (`op` b): b is evaluated first
    op' <- parseExpr ctx op
    b' <- parseExpr ctx b
    vb <- newName "sect"
    x <- newName "x"
    pure (ELet [BVal (VarP vb) Nothing (Plain b') []]
                (ELam [VarP x] (mkApp op' [EVar x, EVar vb])))
  InfixE Nothing op Nothing -> parseExpr ctx op
  -- quotes come with their fixities resolved; only hand-built syntax has these
  UInfixE {} -> bad ctx "an infix expression with unresolved fixity (build it with InfixE)" ex
  ParensE e -> parseExpr ctx e
  LamE ps b -> do
    ps' <- mapM (viewPat ctx) ps
    lambdaOf ps' =<< parseExpr ctx b
  LamCaseE ms -> do
    x <- newName "lc"
    alts <- mapM (parseMatch ctx) ms
    ELam [VarP x] <$> caseOf (EVar x) alts
  TupE ms
    | all (maybe False (const True)) ms -> ETuple <$> mapM (parseExpr ctx) [e | Just e <- ms]
    | otherwise -> tupleSection ctx ms
  CondE c t e -> EIf <$> parseExpr ctx c <*> parseExpr ctx t <*> parseExpr ctx e
  MultiIfE gs -> EMultiIf <$> forM gs (parseGuarded ctx)
  LetE ds b -> ELet <$> parseLocalDecs ctx ds <*> parseExpr ctx b
  CaseE s ms -> do
    s' <- parseExpr ctx s
    caseOf s' =<< mapM (parseMatch ctx) ms
  DoE Nothing stmts -> parseDo ctx ex stmts
  DoE (Just _) _ -> bad ctx "a qualified do block (QualifiedDo)" ex
  MDoE _ _ -> unsupported ctx ("mdo-notation (RecursiveDo): differentiable code is evaluated "
    ++ "strictly, so a value cannot be used before it is bound; write the recursion as a "
    ++ "recursive function, or use an ordinary do block") ""
  CompE stmts -> parseComprehension ctx ex stmts
  ArithSeqE r -> case r of
    FromR a -> EArith . From <$> parseExpr ctx a
    FromThenR a b -> (\x y -> EArith (FromThen x y)) <$> parseExpr ctx a <*> parseExpr ctx b
    FromToR a b -> (\x y -> EArith (FromTo x y)) <$> parseExpr ctx a <*> parseExpr ctx b
    FromThenToR a b c ->
      (\x y z -> EArith (FromThenTo x y z)) <$> parseExpr ctx a <*> parseExpr ctx b <*> parseExpr ctx c
  ListE es -> EList <$> mapM (parseExpr ctx) es
  SigE e t -> (`ESig` t) <$> parseExpr ctx e
  RecConE c fs -> ERecCon c <$> mapM (\(f, e) -> (,) f <$> parseExpr ctx e) fs
  RecUpdE e fs -> ERecUpd <$> parseExpr ctx e <*> mapM (\(f, x) -> (,) f <$> parseExpr ctx x) fs
  UnboundVarE n -> unsupported ctx ("the unbound variable `" ++ nameBase n ++ "'") ""
  AppTypeE _ _ -> bad ctx "a visible type application" ex
  _ -> bad ctx "this expression form" ex
  where
    spine (AppE f x) acc = spine f (x : acc)
    spine f acc = (f, acc)

mkApp :: Expr -> [Expr] -> Expr
mkApp f [] = f
mkApp (EApp f as) bs = EApp f (as ++ bs)
mkApp f as = EApp f as

-- | @(a,)@ and the like: the present components are evaluated first (as
-- for an operator section), the lambda fills in the missing ones.
tupleSection :: Ctx -> [Maybe Exp] -> Q Expr
tupleSection ctx ms = do
  comps <- forM ms $ \m -> case m of
    Just e -> do
      v <- newName "tup"
      e' <- parseExpr ctx e
      pure (Left (v, e'))
    Nothing -> Right <$> newName "x"
  pure (ELet [BVal (VarP v) Nothing (Plain e) [] | Left (v, e) <- comps]
          (ELam [VarP x | Right x <- comps] (ETuple [EVar (either fst id c) | c <- comps])))

parseDo :: Ctx -> Exp -> [Stmt] -> Q Expr
parseDo ctx ex stmts = do
  ss <- forM stmts $ \st -> case st of
    BindS p e -> DoBind <$> viewPat ctx p <*> parseExpr ctx e
    LetS ds -> DoLet <$> parseLocalDecs ctx ds
    NoBindS e -> DoExpr <$> parseExpr ctx e
    ParS _ -> bad ctx "parallel statements in a do block (ParallelListComp)" st
    RecS _ -> bad ctx "a rec block (RecursiveDo): differentiable code is evaluated strictly" st
  case ss of
    [] -> bad ctx "an empty do block" ex
    _ -> doBlock ("dualrev: pattern match failure in a do block in `" ++ ctxDef ctx
                  ++ "' (differentiable block at " ++ ctxBlock ctx ++ ")") ss

-- | Infinite lists are consumed lazily only by the structural functions
-- (zip, take, (!!) ...) and by those that stop early (zipWith, takeWhile);
-- the dual versions of the others run over the whole list first.  Where the
-- list is plainly infinite (a range without an end, cycle, repeat, iterate)
-- the program could only loop, so it is rejected here.
strictOnInfinite :: Ctx -> Exp -> Expr -> Q Expr
strictOnInfinite ctx ex e = case e of
  EApp (EVar f) args
    | Just i <- lookup f strictListArg, (arg : _) <- drop i args, infinite arg ->
        unsupported ctx ("`" ++ nameBase f ++ "' applied to an infinite list (differentiable code "
          ++ "is evaluated strictly: take, zip, zipWith or takeWhile it first)") (shorten (pprint ex))
  _ -> pure e
  where
    infinite x = case x of
      EArith (From _) -> True
      EArith (FromThen _ _) -> True
      EApp (EVar g) as -> g `elem` ['cycle, 'repeat] || (g == 'iterate && length as >= 2)
      ESig y _ -> infinite y
      _ -> False
    -- the position of the list argument
    strictListArg =
      [ ('map, 1), ('filter, 1), ('concatMap, 1), ('foldr, 2), ('foldl, 2), ('foldl', 2)
      , ('foldr1, 1), ('foldl1, 1), ('scanl, 2), ('scanr, 2), ('scanl1, 1), ('scanr1, 1)
      , ('sum, 0), ('product, 0), ('length, 0), ('maximum, 0), ('minimum, 0), ('last, 0)
      , ('reverse, 0), ('fmap, 1), ('(<$>), 1), ('mapM, 1), ('traverse, 1) ]

-- [e | quals] by the usual translation into concatMap, if and let.
parseComprehension :: Ctx -> Exp -> [Stmt] -> Q Expr
parseComprehension ctx ex stmts = case reverse stmts of
  NoBindS res : rquals -> go (reverse rquals) =<< parseExpr ctx res
  _ -> bad ctx "this list comprehension" ex
  where
    go [] res = pure (EList [res])
    go (BindS p l : qs) res = do
      p' <- viewPat ctx p
      inner <- go qs res
      l' <- parseExpr ctx l
      v <- newName "elt"
      body <- caseOf (EVar v) [ VAlt p' (Plain inner) []
                              , VAlt (plainVPat WildP) (Plain (EList [])) [] ]
      strictOnInfinite ctx ex (EApp (EVar 'concatMap) [ELam [VarP v] body, l'])
    go (NoBindS c : qs) res = EIf <$> parseExpr ctx c <*> go qs res <*> pure (EList [])
    go (LetS ds : qs) res = ELet <$> parseLocalDecs ctx ds <*> go qs res
    go (s : _) _ = bad ctx "this qualifier in a list comprehension" s

parseMatch :: Ctx -> Match -> Q VAlt
parseMatch ctx (Match p b ds) = VAlt <$> viewPat ctx p <*> parseBody ctx b <*> parseLocalDecs ctx ds

parseBody :: Ctx -> Body -> Q Core.Body
parseBody ctx (NormalB e) = Plain <$> parseExpr ctx e
parseBody ctx (GuardedB gs) = Guarded <$> mapM (parseGuarded ctx) gs

parseGuarded :: Ctx -> (Language.Haskell.TH.Guard, Exp) -> Q ([Core.Guard], Expr)
parseGuarded ctx (g, e) = do
  gs <- case g of
    NormalG c -> (: []) . GBool <$> parseExpr ctx c
    PatG stmts -> fmap concat $ forM stmts $ \s -> case s of
      NoBindS c -> (: []) . GBool <$> parseExpr ctx c
      BindS p x -> guardsOf <$> viewPat ctx p <*> parseExpr ctx x
      LetS ds -> (: []) . GLet <$> parseLocalDecs ctx ds
      _ -> bad ctx "this guard" s
  (,) gs <$> parseExpr ctx e

-- | Local declarations (let, where): functions, pattern bindings, signatures.
parseLocalDecs :: Ctx -> [Dec] -> Q [Bind]
parseLocalDecs ctx ds = do
  let sigs = M.fromList [(n, t) | SigD n t <- ds]
  fmap concat $ forM ds $ \d -> case d of
    FunD n cs -> (: []) . BFun n (M.lookup n sigs) <$> parseClauses ctx n cs
    -- f = \x -> e is the function f x = e (so it may be recursive)
    ValD (VarP n) (NormalB (LamE ps e)) [] -> do
      cs <- parseClauses ctx n [Language.Haskell.TH.Clause ps (NormalB e) []]
      pure [BFun n (M.lookup n sigs) cs]
    ValD p b ws -> do
      vp <- viewPat ctx p
      when (hasViews vp) $ bad ctx
        "a view pattern in a pattern binding (match it in a case or a function argument)" p
      let sig = case p of { VarP n -> M.lookup n sigs; _ -> Nothing }
      b' <- parseBody ctx b
      ws' <- parseLocalDecs ctx ws
      pure [BVal p sig b' ws']
    SigD _ _ -> pure []
    PragmaD _ -> pure []
    InfixD _ _ -> pure []
    _ -> bad ctx "this local declaration" d

parseClauses :: Ctx -> Name -> [Language.Haskell.TH.Clause] -> Q [Core.Clause]
parseClauses ctx n cs = do
  let arities = [length ps | Language.Haskell.TH.Clause ps _ _ <- cs]
  when (null cs) $ unsupported ctx ("a function without equations: " ++ nameBase n) ""
  unless (all (== head arities) arities) $
    unsupported ctx ("equations of `" ++ nameBase n ++ "' with different numbers of arguments") ""
  cs' <- forM cs $ \(Language.Haskell.TH.Clause ps b ws) ->
    (,,) <$> mapM (viewPat ctx) ps <*> parseBody ctx b <*> parseLocalDecs ctx ws
  clausesOf cs'

-- | A pattern checked, its view patterns split off (their functions parsed).
viewPat :: Ctx -> Pat -> Q VPat
viewPat ctx p0 = checkPat ctx p0 >> uncurry VPat <$> go p0
  where
    go p = case p of
      ViewP e q -> do
        x <- newName "view"
        f <- parseExpr ctx e
        q' <- viewPat ctx q
        pure (VarP x, [(x, f, q')])
      TupP ps -> many TupP ps
      ConP c ps -> many (ConP c) ps
      ListP ps -> many ListP ps
      InfixP a c b -> do
        (a', va) <- go a
        (b', vb) <- go b
        pure (InfixP a' c b', va ++ vb)
      RecP c fs -> do
        rs <- mapM (go . snd) fs
        pure (RecP c (zip (map fst fs) (map fst rs)), concatMap snd rs)
      ParensP q -> one ParensP q
      BangP q -> one BangP q
      AsP n q -> one (AsP n) q
      SigP q t -> one (`SigP` t) q
      TildeP q -> do
        r@(_, vs) <- one TildeP q
        unless (null vs) $ bad ctx "a view pattern inside a lazy pattern (~)" p
        pure r
      _ -> pure (p, [])
    one k q = (\(q', vs) -> (k q', vs)) <$> go q
    many k ps = (\rs -> (k (map fst rs), concatMap snd rs)) <$> mapM go ps

checkPat :: Ctx -> Pat -> Q ()
checkPat ctx p = case p of
  LitP l -> case l of
    IntegerL _ -> ok
    RationalL _ -> ok
    CharL _ -> ok
    StringL _ -> ok
    _ -> bad ctx "this literal pattern" p
  VarP _ -> ok
  TupP ps -> mapM_ (checkPat ctx) ps
  ConP _ ps -> mapM_ (checkPat ctx) ps
  InfixP a _ b -> checkPat ctx a >> checkPat ctx b
  ParensP q -> checkPat ctx q
  TildeP q -> checkPat ctx q
  BangP q -> checkPat ctx q
  AsP _ q -> checkPat ctx q
  WildP -> ok
  RecP _ fs -> mapM_ (checkPat ctx . snd) fs
  ListP ps -> mapM_ (checkPat ctx) ps
  SigP q _ -> checkPat ctx q
  ViewP _ q -> checkPat ctx q
  _ -> bad ctx "this pattern" p
  where ok = pure ()
