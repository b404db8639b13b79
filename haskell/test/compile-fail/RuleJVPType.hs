-- EXPECT: the rule for `polar' (primitiveWithJVP at
-- EXPECT: the JVP `polarJVP' does not have the type of a JVP of `polar'
-- EXPECT: polarJVP :: Double -> Double -> ((Double, Double), (Double, Double) -> (Double, Double))
-- EXPECT: from the tangents of the 2 arguments that hold Doubles, as a tuple in their order, to the value's tangent
{-# LANGUAGE TemplateHaskell #-}
module RuleJVPType where
import Numeric.DualRev

polar :: Double -> Double -> (Double, Double)
polar r t = (r * cos t, r * sin t)

polarVJP :: Double -> Double -> ((Double, Double), (Double, Double) -> (Double, Double))
polarVJP r t = (polar r t, \(a, b) -> (a * cos t + b * sin t, b * r * cos t - a * r * sin t))

-- curried tangents where the rule takes them as a tuple
polarJVP :: Double -> Double -> ((Double, Double), Double -> Double -> (Double, Double))
polarJVP r t = (polar r t, \dr dt -> (dr * cos t - r * sin t * dt, dr * sin t + r * cos t * dt))

primitiveWithJVP 'polar 'polarVJP 'polarJVP
