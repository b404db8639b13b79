{-# LANGUAGE RankNTypes #-}
{-# OPTIONS_HADDOCK hide #-}
-- | Internal, not a stable API.
--
-- The derivatives of the overloaded mode, with the names, argument orders
-- and types of @ad@'s (up to the constraints: containers are 'Traversable'
-- where @ad@ asks only 'Functor' of a forward-mode argument).  Each records
-- the function once ("Numeric.DualRev.Internal.Overloaded.Session") and
-- reads what it needs.
module Numeric.DualRev.Internal.Overloaded.Drivers
  ( -- * Gradients
    grad, grad', gradWith, gradWith'
    -- * Gradients of one function at many points (the descent loops)
  , tapedGradWith'
    -- * Jacobians
  , jacobian, jacobian', jacobianWith, jacobianWith', jacobianT, jacobianWithT
    -- * Hessians
  , hessian, hessian', hessianF, hessianProduct, hessianProduct'
    -- * Derivatives
  , diff, diff', diffF, diffF'
    -- * Directional derivatives
  , du, du', duF, duF'
  ) where

import Control.Concurrent.MVar (newMVar, putMVar, tryTakeMVar)
import Control.Exception (catch, evaluate, mask, onException)
import Data.Foldable (toList)
import Data.Int (Int64)
import Foreign.ForeignPtr (ForeignPtr, newForeignPtr, withForeignPtr)
import Foreign.Marshal.Alloc (alloca)
import Foreign.Marshal.Array (allocaArray, peekArray, pokeArray)
import Foreign.Storable (peek)
import Data.Functor.Compose (Compose (..))
import Data.Functor.Identity (Identity (..))
import System.IO.Unsafe (unsafeDupablePerformIO)
import Unsafe.Coerce (unsafeCoerce)

import Numeric.DualRev.Internal.Engine.FFI
import Numeric.DualRev.Internal.Engine.NestFFI (c_tape_set_order)
import Numeric.DualRev.Internal.Engine.ReplayFFI (c_replay_range, c_value)
import Numeric.DualRev.Internal.Overloaded.Session
import Numeric.DualRev.Internal.Overloaded.Traversals (count, fill, mapIndexed)
import Numeric.DualRev.Internal.Overloaded.Value
import Numeric.DualRev.Internal.Run.Scalar.AD (checkTape)
import Numeric.DualRev.Internal.Run.Driver.Flat (engine, withOrder2Tape)
import Numeric.DualRev.Internal.Run.Driver.Runners (newTape)
import Numeric.DualRev.Internal.Run.Driver.Taped (countRecording)

-- $setup
-- The examples run (make check-doctest) with the names of the public module
-- whose documentation shows them, as its reader has them:
--
-- >>> import Numeric.DualRev.AD

-- | The type the differentiations instantiate their functions' @s@ at.
data S

-- | The inputs as scalars of the differentiation (a newtype: the same
-- container; 'coerce' cannot see that through an unknown functor).
vars :: f Val -> f (Reverse S a)
vars = unsafeCoerce
{-# INLINE vars #-}

out :: Reverse s a -> IO Val
out (Reverse v) = evaluate v
{-# INLINE out #-}

-- | The outputs of a container, forced, with the container.
outs :: Traversable g => g (Reverse s a) -> IO (g (Reverse s a), [Val])
outs ys = do
  vs <- mapM out (toList ys)
  pure (ys, vs)
{-# INLINE outs #-}


------------------------------------------------------------------------------
-- Gradients

-- | The gradient of a function to a scalar.
--
-- >>> grad (\[x, y, z] -> x * y + z) [1, 2, 3]
-- [2.0,1.0,1.0]
grad :: (Traversable f, Element a)
     => (forall s. f (Reverse s a) -> Reverse s a) -> f a -> f a
grad f xs = snd (gradWith' (\_ g -> g) f xs)
{-# INLINE grad #-}

-- | The value and the gradient.
grad' :: (Traversable f, Element a)
      => (forall s. f (Reverse s a) -> Reverse s a) -> f a -> (a, f a)
grad' = gradWith' (\_ g -> g)
{-# INLINE grad' #-}

-- | The gradient, each entry combined with its input by the first argument.
gradWith :: (Traversable f, Element a)
         => (a -> a -> b) -> (forall s. f (Reverse s a) -> Reverse s a) -> f a -> f b
gradWith g f xs = snd (gradWith' g f xs)
{-# INLINE gradWith #-}

-- | The value and 'gradWith'.
gradWith' :: (Traversable f, Element a)
          => (a -> a -> b) -> (forall s. f (Reverse s a) -> Reverse s a) -> f a -> (a, f b)
gradWith' g f xs = unsafeDupablePerformIO $
  differentiate xs [] (out . f . vars) $ \s y -> do
    v <- valueOf s y
    gs <- gradientOf s y
    pure (v, mapIndexed xs (\j x -> g x (gs j)))
{-# INLINE gradWith' #-}

-- | What 'tapedGradWith'' keeps: nothing yet, a recording of f for replay,
-- or that the engine cannot replay f.
data Taped = Fresh | Kept !Recording | Untaped

data Recording = Recording
  { tTape :: !(ForeignPtr CTape)
  , tCount :: !Int     -- ^ inputs first .. first + n - 1
  , tFirst :: !Int64
  , tOut :: !Val
  }

-- | 'gradWith'' of one function at many points, for loops that step from
-- point to point (gradient descent): the first call records f on a tape of
-- its own at order 2, and a later call at a point of as many scalars
-- replays that tape there (include/dualrev.h, \"replay\") instead of
-- running f again, unless a comparison f made on its values comes out
-- otherwise ('Ord' and the rest record them as guards): then it records
-- f again there.  The results are 'gradWith''s, bit for bit.  A point
-- whose scalars belong to an enclosing differentiation, a function the
-- engine cannot replay, or a call that finds the state in use (another
-- thread) is 'gradWith'' itself.
tapedGradWith' :: (Traversable f, Element a)
               => (a -> a -> b) -> (forall s. f (Reverse s a) -> Reverse s a)
               -> IO (f a -> (a, f b))
tapedGradWith' g f = do
  st <- newMVar Fresh
  pure $ \xs -> if not (numbersOnly xs) then gradWith' g f xs else
    unsafeDupablePerformIO $ mask $ \restore -> do
      held <- tryTakeMVar st
      case held of
        Nothing -> pure (gradWith' g f xs)   -- in use by another thread
        Just s -> do
          (s', res) <- restore (step s xs) `onException` putMVar st Fresh
          putMVar st s'
          pure res
  where
    step Fresh xs = record xs
    step Untaped xs = pure (Untaped, gradWith' g f xs)
    step (Kept r) xs
      | count xs /= tCount r = record xs
      | otherwise = withForeignPtr (tTape r) $ \t -> allocaArray (max 1 (tCount r)) $ \p -> do
          pokeArray p (map (primalVal . toVal) (toList xs))
          st <- c_replay_range t (tFirst r) (fromIntegral (tCount r)) p
          case st of
            0 -> do
              let Val y0 yi _ = tOut r
              yv <- if yi == -1 then pure y0 else alloca $ \pv ->
                engine "dr_value" (c_value t yi pv) >> peek pv
              vg <- gradientOn t (tCount r) (tFirst r) (Val yv yi t)
              pure (Kept r, results xs vg)
            7 -> record xs   -- a guard flipped
            _ -> pure (Untaped, gradWith' g f xs)
    record xs = (do
      countRecording
      fp <- newTape >>= newForeignPtr p_tape_free
      withForeignPtr fp $ \t -> do
        engine "dr_tape_set_order" (c_tape_set_order t 2)
        let n = count xs
        first <- c_input_first t (fromIntegral n)
        checkTape t
        y <- (out . f . vars) (mapIndexed xs (\j x -> Val (primalVal (toVal x)) (first + fromIntegral j) t))
        checkTape t
        vg <- gradientOn t n first y
        pure (Kept (Recording fp n first y), results xs vg))
      `catch` \e -> const (pure (Untaped, gradWith' g f xs)) (e :: TapeMismatch)
    -- the value and gradient on t, whose inputs are first .. first + n - 1
    gradientOn t n first (Val yv yi _)
      | yi == -1 || n == 0 = pure (yv, replicate n 0)
      | otherwise = allocaArray (max 1 n) $ \p -> do
          engine "dr_gradient_range" (c_gradient_range t yv yi first (fromIntegral n) p)
          (,) yv <$> peekArray n p
    results xs (v, gs) =
      (fromVal (constVal v), fill xs (zipWith (\x d -> g x (fromVal (constVal d))) (toList xs) gs))

------------------------------------------------------------------------------
-- Jacobians

-- | The Jacobian of a function between containers: one row per output,
-- shaped like the input.  The engine sweeps forward when there are more
-- outputs than inputs, in reverse otherwise.
jacobian :: (Traversable f, Traversable g, Element a)
         => (forall s. f (Reverse s a) -> g (Reverse s a)) -> f a -> g (f a)
jacobian f xs = fmap snd (jacobianWith' (\_ d -> d) f xs)
{-# INLINE jacobian #-}

-- | Each output's value and row.
jacobian' :: (Traversable f, Traversable g, Element a)
          => (forall s. f (Reverse s a) -> g (Reverse s a)) -> f a -> g (a, f a)
jacobian' = jacobianWith' (\_ d -> d)
{-# INLINE jacobian' #-}

-- | 'jacobian', each entry combined with its input by the first argument.
jacobianWith :: (Traversable f, Traversable g, Element a)
             => (a -> a -> b) -> (forall s. f (Reverse s a) -> g (Reverse s a)) -> f a -> g (f b)
jacobianWith g f xs = fmap snd (jacobianWith' g f xs)
{-# INLINE jacobianWith #-}

-- | Each output's value and 'jacobianWith' row.
jacobianWith' :: (Traversable f, Traversable g, Element a)
              => (a -> a -> b) -> (forall s. f (Reverse s a) -> g (Reverse s a)) -> f a
              -> g (a, f b)
jacobianWith' g f xs = unsafeDupablePerformIO $
  differentiate xs [] (outs . f . vars) $ \s (ys, vs) -> do
    values <- mapM (valueOf s) vs
    jac <- jacobianOf s vs
    pure (fill ys [(v, mapIndexed xs (\c x -> g x (jac r c))) | (r, v) <- zip [0 ..] values])
{-# INLINE jacobianWith' #-}

-- | The transposed Jacobian: one entry per input, each shaped like the
-- output.
jacobianT :: (Traversable f, Traversable g, Element a)
          => (forall s. f (Reverse s a) -> g (Reverse s a)) -> f a -> f (g a)
jacobianT = jacobianWithT (\_ d -> d)
{-# INLINE jacobianT #-}

-- | 'jacobianT', each entry combined with its input.
jacobianWithT :: (Traversable f, Traversable g, Element a)
              => (a -> a -> b) -> (forall s. f (Reverse s a) -> g (Reverse s a)) -> f a
              -> f (g b)
jacobianWithT g f xs = unsafeDupablePerformIO $
  differentiate xs [] (outs . f . vars) $ \s (ys, vs) -> do
    jac <- jacobianOf s vs
    pure (mapIndexed xs (\c x -> mapIndexed ys (\r _ -> g x (jac r c))))
{-# INLINE jacobianWithT #-}

------------------------------------------------------------------------------
-- Hessians

-- | The Hessian of a function to a scalar: numbers at numbers, on a tape of
-- order 2 (the engine's dr_hessian: by edge pushing where that costs less,
-- else one Hessian-vector product per input);
-- nested, the Jacobian of the gradient.
hessian :: (Traversable f, Element a)
        => (forall s. f (Reverse s a) -> Reverse s a) -> f a -> f (f a)
hessian f xs = fmap snd (snd (hessian' f xs))
{-# INLINE hessian #-}

-- | The value, and per input the gradient's entry and the Hessian's row.
hessian' :: (Traversable f, Element a)
         => (forall s. f (Reverse s a) -> Reverse s a) -> f a -> (a, f (a, f a))
hessian' f xs
  | any (isActive . toVal) xl = composed
  | otherwise = unsafeDupablePerformIO $
      differentiateOn withOrder2Tape xs [] (out . f . vars) $ \s y ->
        case hessianOf s of
          Just h -> do
            v <- valueOf s y
            g <- gradientOf s y
            rs <- h y
            pure (v, fill xs (zip (map g [0 ..]) (map (fill xs) rs)))
          Nothing -> pure composed
  where
    xl = toList xs
    composed = (fst (grad' f xs), jacobian' (grad (recast . f . fmap recast)) xs)

-- | The Hessians of a function between containers, one per output.
hessianF :: (Traversable f, Traversable g, Element a)
         => (forall s. f (Reverse s a) -> g (Reverse s a)) -> f a -> g (f (f a))
hessianF f xs = getCompose (jacobian (\ys -> Compose (jacobian (fmap recast . f . fmap recast) ys)) xs)

-- | The product of the Hessian with a direction: the input paired with the
-- direction, entry by entry.
hessianProduct :: (Traversable f, Element a)
               => (forall s. f (Reverse s a) -> Reverse s a) -> f (a, a) -> f a
hessianProduct f xvs = fmap snd (hessianProduct' f xvs)
{-# INLINE hessianProduct #-}

-- | The gradient and the Hessian-vector product, entry by entry.
hessianProduct' :: (Traversable f, Element a)
                => (forall s. f (Reverse s a) -> Reverse s a) -> f (a, a) -> f (a, a)
hessianProduct' f xvs
  | any (isActive . toVal) (xl ++ vl) = composed
  | otherwise = unsafeDupablePerformIO $
      differentiateOn withOrder2Tape xs vl (out . f . vars) $ \s y ->
        case hvpOf s of
          Just h -> do
            g <- gradientOf s y
            hv <- h vl y
            pure (fill xs (zip (map g [0 ..]) hv))
          Nothing -> pure composed
  where
    xs = fmap fst xvs
    xl = toList xs
    vl = map snd (toList xvs)
    composed = duF' (grad (recast . f . fmap recast)) xvs

------------------------------------------------------------------------------
-- Derivatives of functions of one scalar

-- | The derivative.
--
-- >>> diff sin 0
-- 1.0
diff :: Element a => (forall s. Reverse s a -> Reverse s a) -> a -> a
diff f x = snd (diff' f x)
{-# INLINE diff #-}

-- | The value and the derivative.
diff' :: Element a => (forall s. Reverse s a -> Reverse s a) -> a -> (a, a)
diff' f x = case grad' (f . runIdentity) (Identity x) of (v, Identity d) -> (v, d)
{-# INLINE diff' #-}

-- | The derivative of each output.
diffF :: (Traversable g, Element a) => (forall s. Reverse s a -> g (Reverse s a)) -> a -> g a
diffF f x = fmap snd (diffF' f x)
{-# INLINE diffF #-}

-- | The value and the derivative of each output.
diffF' :: (Traversable g, Element a) => (forall s. Reverse s a -> g (Reverse s a)) -> a -> g (a, a)
diffF' f x = fmap (\(v, Identity d) -> (v, d)) (jacobian' (f . runIdentity) (Identity x))
{-# INLINE diffF' #-}

------------------------------------------------------------------------------
-- Directional derivatives

-- | The derivative along a direction: the input paired with the direction,
-- entry by entry.  One forward sweep.
du :: (Traversable f, Element a) => (forall s. f (Reverse s a) -> Reverse s a) -> f (a, a) -> a
du f xvs = snd (du' f xvs)
{-# INLINE du #-}

-- | The value and the directional derivative.
du' :: (Traversable f, Element a) => (forall s. f (Reverse s a) -> Reverse s a) -> f (a, a) -> (a, a)
du' f xvs = runIdentity (duF' (Identity . f) xvs)
{-# INLINE du' #-}

-- | The directional derivative of each output.
duF :: (Traversable f, Traversable g, Element a)
    => (forall s. f (Reverse s a) -> g (Reverse s a)) -> f (a, a) -> g a
duF f xvs = fmap snd (duF' f xvs)
{-# INLINE duF #-}

-- | Each output's value and directional derivative.
duF' :: (Traversable f, Traversable g, Element a)
     => (forall s. f (Reverse s a) -> g (Reverse s a)) -> f (a, a) -> g (a, a)
duF' f xvs = unsafeDupablePerformIO $
  differentiate xs vl (outs . f . vars) $ \s (ys, vs) -> do
    values <- mapM (valueOf s) vs
    ds <- jvpOf s vl vs
    pure (fill ys (zip values ds))
  where
    xs = fmap fst xvs
    vl = map snd (toList xvs)
{-# INLINE duF' #-}
