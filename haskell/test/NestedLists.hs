{-# LANGUAGE TemplateHaskell #-}
-- | Derivatives inside differentiable code of inner functions that use
-- their list argument any number of times: list comprehensions over it
-- twice, concatMap, nested maps, folds, zips with itself, reversal,
-- indexing, and sums of their results (one n-ary tape node each).
--
-- The fixed cases have closed forms.  The property runs an interpreter,
-- written in a block, over random list programs given as data: the nested
-- gradient must be the plain gradient of the same program, and the
-- gradient through it (a Hessian-vector product) must match central
-- finite differences of the plain gradient.
module NestedLists (spec) where

import Test.Hspec
import Test.QuickCheck

import Check
import Numeric.DualRev

------------------------------------------------------------------------------
-- Fixed inner functions

differentiable [d|
  -- sum xs ^ 2 written as a comprehension over the argument twice
  twice :: [Double] -> Double
  twice ys = sum [a * b | a <- ys, b <- ys]

  twiceOuter :: [Double] -> Double
  twiceOuter xs = sum (zipWith (*) xs (gradient twice xs))

  twiceGrad :: [Double] -> [Double]
  twiceGrad xs = gradient twice xs

  -- the same with concatMap
  twiceCM :: [Double] -> Double
  twiceCM ys = sum (concatMap (\a -> map (* a) ys) ys)

  twiceCMOuter :: [Double] -> Double
  twiceCMOuter xs = sum (zipWith (*) xs (gradient twiceCM xs))

  -- the same, the inner function a lambda
  twiceLambdaOuter :: [Double] -> Double
  twiceLambdaOuter xs = sum (zipWith (*) xs (gradient (\ys -> sum [a * b | a <- ys, b <- ys]) xs))

  -- a sum of the argument itself, used twice; and once
  sumTwiceGrad :: [Double] -> [Double]
  sumTwiceGrad xs = gradient (\ys -> sum ys + sum ys) xs

  sumOnceGrad :: [Double] -> [Double]
  sumOnceGrad xs = gradient (\ys -> sum ys * 3) xs

  -- a scalar inner function whose body sums a list built from its argument
  sumScaledDeriv :: [Double] -> Double
  sumScaledDeriv xs = derivative (\t -> sum (map (* t) xs ++ [t * t, t, 2 * t])) 1.5

  -- single pass (a fused sum of products): right before the fix too
  onePass :: [Double] -> Double
  onePass xs = sum (zipWith (*) xs (gradient (\ys -> sum (zipWith (*) ys (map tanh ys))) xs))
  |]

------------------------------------------------------------------------------
-- Random list programs

-- | A list-valued program of the inner function's argument.
data L
  = LArg                -- ^ the argument
  | LConst              -- ^ a constant list
  | LMap Int L          -- ^ map of a unary function
  | LZip Int L L        -- ^ zipWith of a binary function
  | LComp Int L L       -- ^ [f a b | a <- .., b <- ..]
  | LConcatMap L L      -- ^ concatMap (\a -> map (* a) ..) ..
  | LZipSelf L          -- ^ zipWith (*) zs (reverse zs)
  | LRev L
  | LAppend L L
  | LTake Int L
  | LScan L             -- ^ scanl1 (+)
  | LNested L           -- ^ map (\a -> sum (map (* a) zs)) zs
  deriving (Show)

-- | A scalar-valued program of the inner function's argument.
data S
  = SSum L              -- ^ sum: one n-ary node
  | SFoldl L
  | SFoldr L
  | SIndex Int L        -- ^ (!!)
  | SDot L L            -- ^ sum (zipWith (*) ..): one statement
  | SSumMap Int L       -- ^ sum (map f ..): a fused sum
  | SProd L
  | SAdd S S
  | SMul S S
  | SSin S
  | SShare S            -- ^ a value used three times
  deriving (Show)

differentiable [d|
  unary :: Int -> Double -> Double
  unary k x = case k `mod` 4 of
    0 -> tanh x
    1 -> x * x
    2 -> sin x + 0.5 * x
    _ -> 2 * x - 0.25

  binary :: Int -> Double -> Double -> Double
  binary k x y = case k `mod` 3 of
    0 -> x * y
    1 -> x + y
    _ -> x - 0.5 * y

  evalL :: L -> [Double] -> [Double]
  evalL e ys = case e of
    LArg -> ys
    LConst -> [0.5, -0.25]
    LMap u a -> map (unary u) (evalL a ys)
    LZip b a c -> zipWith (binary b) (evalL a ys) (evalL c ys)
    LComp b a c -> [binary b p q | p <- evalL a ys, q <- evalL c ys]
    LConcatMap a c -> concatMap (\p -> map (* p) (evalL c ys)) (evalL a ys)
    LZipSelf a -> let zs = evalL a ys in zipWith (*) zs (reverse zs)
    LRev a -> reverse (evalL a ys)
    LAppend a c -> evalL a ys ++ evalL c ys
    LTake k a -> take k (evalL a ys)
    LScan a -> scanl1 (+) (evalL a ys)
    LNested a -> let zs = evalL a ys in map (\p -> sum (map (* p) zs)) zs

  evalS :: S -> [Double] -> Double
  evalS e ys = case e of
    SSum a -> sum (evalL a ys)
    SFoldl a -> foldl (\acc p -> 0.5 * acc + p) 0 (evalL a ys)
    SFoldr a -> foldr (\p acc -> p * 0.75 + acc) 1 (evalL a ys)
    SIndex k a -> let zs = evalL a ys in if null zs then 0 else zs !! (k `mod` length zs)
    SDot a c -> sum (zipWith (*) (evalL a ys) (evalL c ys))
    SSumMap u a -> sum (map (unary u) (evalL a ys))
    SProd a -> product (map (\p -> 1 + 0.1 * tanh p) (evalL a ys))
    SAdd a b -> evalS a ys + evalS b ys
    SMul a b -> evalS a ys * evalS b ys
    SSin a -> sin (evalS a ys)
    SShare a -> let z = evalS a ys in z * z + z * 0.5 - z

  -- the program, differentiated at first order
  plainInner :: (S, [Double]) -> Double
  plainInner (p, xs) = evalS p xs

  -- its gradient, taken inside differentiable code
  nestedGrad :: (S, [Double]) -> [Double]
  nestedGrad (p, xs) = gradient (evalS p) xs

  -- a function of that gradient: its gradient is H w
  nestedOuter :: (S, Constant [Double], [Double]) -> Double
  nestedOuter (p, w, xs) = sum (zipWith (*) (constant w) (gradient (evalS p) xs))

  -- the directional derivative along v, taken inside differentiable code
  -- by a scalar inner function: its gradient is H v
  nestedDir :: (S, Constant [Double], [Double]) -> Double
  nestedDir (p, v, xs) = derivative (\t -> evalS p (zipWith (\a b -> a + t * b) xs (constant v))) 0
  |]

-- | The length of a program's list at an argument of n elements.
lenL :: Int -> L -> Int
lenL n e = case e of
  LArg -> n
  LConst -> 2
  LMap _ a -> lenL n a
  LZip _ a c -> min (lenL n a) (lenL n c)
  LComp _ a c -> lenL n a * lenL n c
  LConcatMap a c -> lenL n a * lenL n c
  LZipSelf a -> lenL n a
  LRev a -> lenL n a
  LAppend a c -> lenL n a + lenL n c
  LTake k a -> max 0 (min k (lenL n a))
  LScan a -> lenL n a
  LNested a -> lenL n a

-- | The longest list a program of S makes.
maxLen :: Int -> S -> Int
maxLen n e = case e of
  SSum a -> lenL n a
  SFoldl a -> lenL n a
  SFoldr a -> lenL n a
  SIndex _ a -> lenL n a
  SDot a c -> max (lenL n a) (lenL n c)
  SSumMap _ a -> lenL n a
  SProd a -> lenL n a
  SAdd a b -> max (maxLen n a) (maxLen n b)
  SMul a b -> max (maxLen n a) (maxLen n b)
  SSin a -> maxLen n a
  SShare a -> maxLen n a

-- | Programs built from the argument a random number of times.
genL :: Int -> Gen L
genL 0 = frequency [(5, pure LArg), (1, pure LConst)]
genL d = frequency
  [ (2, pure LArg)
  , (2, LMap <$> choose (0, 3) <*> sub)
  , (2, LZip <$> choose (0, 2) <*> sub <*> sub)
  , (3, LComp <$> choose (0, 2) <*> sub <*> sub)
  , (2, LConcatMap <$> sub <*> sub)
  , (1, LZipSelf <$> sub)
  , (1, LRev <$> sub)
  , (1, LAppend <$> sub <*> sub)
  , (1, LTake <$> choose (1, 5) <*> sub)
  , (1, LScan <$> sub)
  , (1, LNested <$> sub)
  ]
  where sub = genL (d - 1)

genS :: Int -> Gen S
genS d = frequency $
  [ (4, SSum <$> l)
  , (1, SFoldl <$> l)
  , (1, SFoldr <$> l)
  , (1, SIndex <$> choose (0, 7) <*> l)
  , (2, SDot <$> l <*> l)
  , (1, SSumMap <$> choose (0, 3) <*> l)
  , (1, SProd <$> l)
  ] ++ (if d <= 0 then [] else
  [ (1, SAdd <$> genS (d - 1) <*> genS (d - 1))
  , (1, SMul <$> genS (d - 1) <*> genS (d - 1))
  , (1, SSin <$> genS (d - 1))
  , (1, SShare <$> genS (d - 1))
  ])
  where l = choose (0, 3) >>= genL

-- | A program, an argument and a direction, the program's lists kept short.
data Case = Case S [Double] [Double]
  deriving (Show)

genCase :: Gen Case
genCase = do
  n <- choose (1, 4)
  p <- (choose (0, 2) >>= genS) `suchThat` (\p -> maxLen n p <= 64)
  xs <- vectorOf n (choose (-1.2, 1.2))
  w <- vectorOf n (choose (-1, 1))
  pure (Case p xs w)

plainGrad :: S -> [Double] -> [Double]
plainGrad p xs = snd ($(grad 'plainInner) (p, xs))

-- | 'onePass' with its inner gradient written out: x (tanh x + x sech^2 x).
onePassRef :: [Double] -> Double
onePassRef xs = sum [x * (tanh x + x / (cosh x * cosh x)) | x <- xs]

dot :: [Double] -> [Double] -> Double
dot a b = sum (zipWith (*) a b)

-- | The nested gradient is the plain one (to rounding: they add in
-- different orders), and both match finite differences of the program.
nestedGradProp :: Case -> Property
nestedGradProp (Case p xs _) =
  let g = plainGrad p xs
      ng = fst ($(differentiate 'nestedGrad) (p, xs))
      fd = fdGrad (\z -> evalS p z) xs
  in counterexample ("nested gradient " ++ show ng ++ "\nplain gradient " ++ show g
                     ++ "\nfinite differences " ++ show (map (map fst) fd)) $
       length ng == length xs
       .&&. and (zipWith (closeRel 1e-9) ng g)
       .&&. and (zipWith (closeFD (evalS p xs)) ng fd)

-- | The gradient through the nested gradient (and through a nested
-- directional derivative) is H w: central finite differences of the plain
-- gradient along w.
outerGradProp :: Case -> Property
outerGradProp (Case p xs w) =
  let (v, (_, _, hw)) = $(grad' 'nestedOuter) (p, Constant w, xs)
      (dv, (_, _, hw')) = $(grad' 'nestedDir) (p, Constant w, xs)
      g = plainGrad p xs
      fd = fdGrad (\z -> dot w (plainGrad p z)) xs
  in counterexample ("value " ++ show v ++ " / " ++ show dv ++ ", plain " ++ show (dot w g)
                     ++ "\ngradient through gradient " ++ show hw
                     ++ "\ngradient through derivative " ++ show hw'
                     ++ "\nfinite differences of the plain gradient " ++ show (map (map fst) fd)) $
       closeRel 1e-9 v (dot w g)
       .&&. closeRel 1e-9 dv (dot w g)
       .&&. length hw == length xs
       .&&. and (zipWith (closeFD (dot w g)) hw fd)
       .&&. and (zipWith (closeFD (dot w g)) hw' fd)

spec :: Spec
spec = describe "nested derivatives of functions that use their list argument many times" $ do
  let x = [0.4, -0.7, 1.1]
      s = sum x
      closeTo a b = abs (a - b) <= 1e-12 * (1 + abs b)
  it "gradient of sum [a * b | a <- ys, b <- ys] inside a block: value 2 (sum x)^2, gradient 4 sum x" $ do
    let (v, g) = $(grad' 'twiceOuter) x
    v `shouldSatisfy` closeTo (2 * s * s)
    g `shouldSatisfy` all (closeTo (4 * s))
    fst ($(differentiate 'twiceGrad) x) `shouldSatisfy` all (closeTo (2 * s))
  it "the same written with concatMap, and as a lambda" $ do
    let (v, g) = $(grad' 'twiceCMOuter) x
    v `shouldSatisfy` closeTo (2 * s * s)
    g `shouldSatisfy` all (closeTo (4 * s))
    let (v', g') = $(grad' 'twiceLambdaOuter) x
    v' `shouldSatisfy` closeTo (2 * s * s)
    g' `shouldSatisfy` all (closeTo (4 * s))
  it "gradient of sum ys + sum ys and of sum ys * 3 (one n-ary node per sum)" $ do
    fst ($(differentiate 'sumTwiceGrad) x) `shouldBe` [2, 2, 2]
    fst ($(differentiate 'sumOnceGrad) x) `shouldBe` [3, 3, 3]
  it "derivative of a sum of a list built from its argument" $ do
    -- d/dt (t sum xs + t^2 + t + 2 t) at 1.5 = sum xs + 6; gradient 1 each
    let (v, g) = $(grad' 'sumScaledDeriv) x
    v `shouldSatisfy` closeTo (s + 6)
    g `shouldSatisfy` all (closeTo 1)
  it "a single-pass inner function (sum of products) against finite differences" $
    property $ forAll (listOf1N 5 dbl) $ \xs -> gradProp onePassRef $(grad 'onePass) xs
  it "random list programs: the nested gradient is the plain gradient" $
    property $ forAll genCase nestedGradProp
  it "random list programs: the gradient through it is H w (finite differences of the plain gradient)" $
    property $ forAll genCase outerGradProp
