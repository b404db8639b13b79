-- EXPECT: the rule for `norm' (primitive at
-- EXPECT: argument 1 of `norm' (Maybe [Double]) holds Maybe [Double], which a rule does not take
-- EXPECT: a rule's result, and each argument holding Doubles, is built from Double, lists and tuples; arguments of other types must hold no Double (Int, Bool, Constant ...)
{-# LANGUAGE TemplateHaskell #-}
module RuleUnsupportedType where
import Numeric.DualRev

norm :: Maybe [Double] -> Double
norm = maybe 0 (sqrt . sum . map (^ (2 :: Int)))

normVJP :: Maybe [Double] -> (Double, Double -> Maybe [Double])
normVJP m = (norm m, \ybar -> fmap (map (\x -> ybar * x / norm m)) m)

primitive 'norm 'normVJP
