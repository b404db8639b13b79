{-# LANGUAGE FlexibleInstances #-}
{-# LANGUAGE UndecidableInstances #-}
{-# LANGUAGE FunctionalDependencies #-}
{-# OPTIONS_HADDOCK hide #-}
-- | Internal, not a stable API: called at run time by the code that the
-- splices generate (so exposed, but hidden from the documentation).
--
-- Moving plain values onto a tape and back ('Carrier'), and 'liftP', which
-- runs a dual operation on constants to give the ordinary operation: so the
-- functions of ordinary code and of differentiable code are one C kernel.
module Numeric.DualRev.Internal.Run.Array.Carrier
  ( Carrier (..)
  , liftP, liftP1, liftP2, liftP3, liftP4, liftP5
  , primalVec, primalMat
  ) where

import Control.Monad (when)
import Foreign.ForeignPtr (touchForeignPtr, withForeignPtr)
import System.IO.Unsafe (unsafeDupablePerformIO)

import Numeric.DualRev.Internal.Engine.ArrayFFI
import Numeric.DualRev.Internal.Run.Scalar.AD
import Numeric.DualRev.Internal.Run.Array.Data
import Numeric.DualRev.Internal.Run.Array.Dual (arrShape, arrSize)
import Numeric.DualRev.Internal.Run.Driver.Runners (withPooledTape)

-- | A plain value and its dual: moving a value onto a tape as a constant and
-- reading a dual's value back.
--
-- Arrays go onto the tape without a copy (the tape borrows their pinned
-- storage); 'keepAlive' must then be called after the tape's last use of
-- them (its sweep), so the storage is not collected before.
class Carrier p d | p -> d, d -> p where
  toDual :: T -> p -> IO d
  fromDual :: T -> d -> IO p
  keepAlive :: p -> IO ()
  keepAlive _ = pure ()

instance Carrier Vec DVec where
  toDual t (Vec n fp) = withForeignPtr fp $ \p -> DVec <$> c_arr_const_ref t 1 (fromIntegral n) 1 p
  fromDual = primalVec
  keepAlive (Vec _ fp) = touchForeignPtr fp

instance Carrier Mat DMat where
  toDual t (Mat r c fp) = withForeignPtr fp $ \p ->
    DMat <$> c_arr_const_ref t 2 (fromIntegral r) (fromIntegral c) p
  fromDual = primalMat
  keepAlive (Mat _ _ fp) = touchForeignPtr fp

instance Carrier Double D where
  toDual _ x = pure (constD x)
  fromDual _ (D x _) = pure x

instance Carrier Int Int where
  toDual _ = pure
  fromDual _ = pure

instance Carrier Bool Bool where
  toDual _ = pure
  fromDual _ = pure

-- (tuples up to 7, as everywhere the splices take tuples)
instance (Carrier p d, Carrier q e) => Carrier (p, q) (d, e) where
  toDual t (a, b) = (,) <$> toDual t a <*> toDual t b
  fromDual t (a, b) = (,) <$> fromDual t a <*> fromDual t b
  keepAlive (a, b) = keepAlive a >> keepAlive b

instance (Carrier p d, Carrier q e, Carrier r f)
         => Carrier (p, q, r) (d, e, f) where
  toDual t (a, b, c) = (,,) <$> toDual t a <*> toDual t b <*> toDual t c
  fromDual t (a, b, c) = (,,) <$> fromDual t a <*> fromDual t b <*> fromDual t c
  keepAlive (a, b, c) = keepAlive a >> keepAlive b >> keepAlive c

instance (Carrier p d, Carrier q e, Carrier r f, Carrier s g)
         => Carrier (p, q, r, s) (d, e, f, g) where
  toDual t (a, b, c, k) = (,,,) <$> toDual t a <*> toDual t b <*> toDual t c <*> toDual t k
  fromDual t (a, b, c, k) = (,,,) <$> fromDual t a <*> fromDual t b <*> fromDual t c <*> fromDual t k
  keepAlive (a, b, c, k) = keepAlive a >> keepAlive b >> keepAlive c >> keepAlive k

instance (Carrier p d, Carrier q e, Carrier r f, Carrier s g, Carrier u h)
         => Carrier (p, q, r, s, u) (d, e, f, g, h) where
  toDual t (a, b, c, k, l) = (,,,,) <$> toDual t a <*> toDual t b <*> toDual t c <*> toDual t k <*> toDual t l
  fromDual t (a, b, c, k, l) = (,,,,) <$> fromDual t a <*> fromDual t b <*> fromDual t c <*> fromDual t k <*> fromDual t l
  keepAlive (a, b, c, k, l) = keepAlive a >> keepAlive b >> keepAlive c >> keepAlive k >> keepAlive l

instance (Carrier p d, Carrier q e, Carrier r f, Carrier s g, Carrier u h, Carrier v i)
         => Carrier (p, q, r, s, u, v) (d, e, f, g, h, i) where
  toDual t (a, b, c, k, l, m) = (,,,,,) <$> toDual t a <*> toDual t b <*> toDual t c <*> toDual t k <*> toDual t l <*> toDual t m
  fromDual t (a, b, c, k, l, m) = (,,,,,) <$> fromDual t a <*> fromDual t b <*> fromDual t c <*> fromDual t k <*> fromDual t l <*> fromDual t m
  keepAlive (a, b, c, k, l, m) = keepAlive a >> keepAlive b >> keepAlive c >> keepAlive k >> keepAlive l >> keepAlive m

instance (Carrier p d, Carrier q e, Carrier r f, Carrier s g, Carrier u h, Carrier v i, Carrier w j)
         => Carrier (p, q, r, s, u, v, w) (d, e, f, g, h, i, j) where
  toDual t (a, b, c, k, l, m, n) = (,,,,,,) <$> toDual t a <*> toDual t b <*> toDual t c <*> toDual t k <*> toDual t l <*> toDual t m <*> toDual t n
  fromDual t (a, b, c, k, l, m, n) = (,,,,,,) <$> fromDual t a <*> fromDual t b <*> fromDual t c <*> fromDual t k <*> fromDual t l <*> fromDual t m <*> fromDual t n
  keepAlive (a, b, c, k, l, m, n) = keepAlive a >> keepAlive b >> keepAlive c >> keepAlive k >> keepAlive l >> keepAlive m >> keepAlive n

instance Carrier p d => Carrier [p] [d] where
  toDual t = mapM (toDual t)
  fromDual t = mapM (fromDual t)
  keepAlive = mapM_ keepAlive

-- | Run a dual operation on constants: the ordinary operation, computed by
-- the same C kernels.  The tape is a temporary one.
liftP :: Carrier r dr => (T -> IO dr) -> r
liftP body = unsafeDupablePerformIO $ withPooledTape $ \t -> do
  d <- body t
  checkTape t
  fromDual t d

liftP1 :: (Carrier a da, Carrier r dr) => (da -> AD dr) -> a -> r
liftP1 f a = liftP (\t -> toDual t a >>= \a' -> unAD (f a') t <* keepAlive a)

liftP2 :: (Carrier a da, Carrier b db, Carrier r dr) => (da -> db -> AD dr) -> a -> b -> r
liftP2 f a b = liftP (\t -> do { a' <- toDual t a; b' <- toDual t b; unAD (f a' b') t <* keepAlive (a, b) })

liftP3 :: (Carrier a da, Carrier b db, Carrier c dc, Carrier r dr)
       => (da -> db -> dc -> AD dr) -> a -> b -> c -> r
liftP3 f a b c = liftP (\t -> do { a' <- toDual t a; b' <- toDual t b; c' <- toDual t c; unAD (f a' b' c') t <* keepAlive (a, (b, c)) })

liftP4 :: (Carrier a da, Carrier b db, Carrier c dc, Carrier e de, Carrier r dr)
       => (da -> db -> dc -> de -> AD dr) -> a -> b -> c -> e -> r
liftP4 f a b c e = liftP $ \t -> do
  a' <- toDual t a
  b' <- toDual t b
  c' <- toDual t c
  e' <- toDual t e
  unAD (f a' b' c' e') t <* keepAlive (a, (b, (c, e)))

liftP5 :: (Carrier a da, Carrier b db, Carrier c dc, Carrier e de, Carrier g dg, Carrier r dr)
       => (da -> db -> dc -> de -> dg -> AD dr) -> a -> b -> c -> e -> g -> r
liftP5 f a b c e g = liftP $ \t -> do
  a' <- toDual t a
  b' <- toDual t b
  c' <- toDual t c
  e' <- toDual t e
  g' <- toDual t g
  unAD (f a' b' c' e' g') t <* keepAlive (a, (b, (c, (e, g))))

primalVec :: T -> DVec -> IO Vec
primalVec t (DVec i) = do
  n <- arrSize t i
  when (n < 0) $ arrayError "not an array of this tape (an earlier array operation failed?)"
  Vec n <$> newBuf n (\p -> () <$ c_arr_read t i p)

primalMat :: T -> DMat -> IO Mat
primalMat t (DMat i) = do
  n <- arrSize t i
  when (n < 0) $ arrayError "not an array of this tape (an earlier array operation failed?)"
  (r, c) <- arrShape t i
  Mat r c <$> newBuf n (\p -> () <$ c_arr_read t i p)
