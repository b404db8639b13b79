{-# LANGUAGE RankNTypes #-}
{-# LANGUAGE ScopedTypeVariables #-}
{-# OPTIONS_HADDOCK hide #-}
-- | Internal, not a stable API.
--
-- One differentiation of the overloaded mode: where it records and how its
-- derivatives are read.
--
-- A differentiation whose inputs are numbers (or constants of an enclosing
-- differentiation) records on a tape of its own, with its inputs as input
-- nodes, and reads derivatives with the engine's sweeps.  One whose inputs
-- (or directions) are variables of an enclosing differentiation records on
-- that one's tape, on copies of the inputs, while the tape logs what second
-- derivatives need; its derivatives are then tangent passes recorded as
-- ordinary operations (dr_tangent_record), so that the enclosing
-- differentiation differentiates through them.  Seeding only the copies
-- keeps the levels' perturbations apart.
--
-- A differentiation of constants that meets a variable of an enclosing one
-- (its function closes over it) learns so from 'TapeMismatch' and starts
-- again on that tape.
module Numeric.DualRev.Internal.Overloaded.Session
  ( Session (..)
  , differentiate
  , differentiateOn
  , ownOrEnclosing
  ) where

import Control.Exception (catch, throwIO)
import Control.Monad (forM, when)
import Data.Foldable (toList)
import Data.Int (Int64)
import qualified Data.Vector as V
import Foreign.ForeignPtr (ForeignPtr, withForeignPtr)
import Foreign.Marshal.Array (allocaArray, peekArray, withArray)
import Foreign.Ptr (Ptr)
import Foreign.Storable (peekElemOff)
import GHC.ForeignPtr (mallocPlainForeignPtrBytes)

import Numeric.DualRev.Internal.Engine.FFI
import Numeric.DualRev.Internal.Run.Scalar.AD (D (..), checkTape, constD)
import Numeric.DualRev.Internal.Run.Driver.Flat (engine, rowsOf, withReals)
import Numeric.DualRev.Internal.Run.Control.Nested (copyOf, nestedOn, tangentSeeded)
import Numeric.DualRev.Internal.Run.Driver.Runners (withPooledTape)
import Numeric.DualRev.Internal.Overloaded.Traversals
import Numeric.DualRev.Internal.Overloaded.Value

-- | The derivatives of a recorded function, by output.
data Session a = Session
  { -- | An output's value as a result.
    valueOf :: Val -> IO a
    -- | The partials of an output with respect to the inputs, by index.
  , gradientOf :: Val -> IO (Int -> a)
    -- | The Jacobian of the outputs, by row (output) and column (input).
  , jacobianOf :: [Val] -> IO (Int -> Int -> a)
    -- | The directional derivatives of the outputs along a direction (one
    -- entry per input).
  , jvpOf :: [a] -> [Val] -> IO [a]
    -- | The Hessian's rows and a Hessian-vector product of an output, on a
    -- tape of its own of order 2 (Nothing on an enclosing tape).
  , hessianOf :: Maybe (Val -> IO [[a]])
  , hvpOf :: Maybe ([a] -> Val -> IO [a])
  }

-- | Runs a differentiation: records @f@ at the inputs (the scalars of the
-- container, as the session's variables) and hands its result to @k@ with
-- the session that reads its derivatives.  @f@ must force the output
-- values it returns.  @more@ are further values (a direction) that decide,
-- with the inputs, which tape to record on.
differentiate :: (Traversable f, Element a)
              => f a -> [a] -> (f Val -> IO o) -> (Session a -> o -> IO r) -> IO r
differentiate = differentiateOn withPooledTape
{-# INLINE differentiate #-}

-- | 'differentiate' with a tape of its own from the given bracket (one of
-- order 2 for the second-order reads).
differentiateOn :: (Traversable f, Element a) => (forall b. (Ptr CTape -> IO b) -> IO b)
                -> f a -> [a] -> (f Val -> IO o) -> (Session a -> o -> IO r) -> IO r
differentiateOn with xs more f k
  | numbersOnly xs = with (ownTape xs f k)
  | otherwise = ownOrEnclosing with (map toVal (toList xs ++ more))
                               (ownTape xs f k) (enclosingTape xs f k)
{-# INLINE differentiateOn #-}

-- | Runs @own@ on a tape of its own (from @with@) unless a value belongs to
-- a tape already (an enclosing differentiation's), or @own@ meets such a
-- value: then @enclosing@ on that tape.
ownOrEnclosing :: (forall b. (Ptr CTape -> IO b) -> IO b) -> [Val]
               -> (Ptr CTape -> IO r) -> (Ptr CTape -> IO r) -> IO r
ownOrEnclosing with vals own enclosing = case [t | Val _ i t <- vals, i /= -1] of
  t : _ -> enclosing t
  [] -> do
    r <- with $ \t -> (Right <$> own t) `catch` \e@(TapeMismatch a b) ->
      if a == t then pure (Left b) else if b == t then pure (Left a) else throwIO e
    either enclosing pure r
{-# INLINE ownOrEnclosing #-}

-- | On a tape of its own: the inputs are input nodes, numbers come out.
ownTape :: forall f a o r. (Traversable f, Element a) => f a -> (f Val -> IO o)
        -> (Session a -> o -> IO r) -> Ptr CTape -> IO r
ownTape xs f k t = do
  let n = count xs
  first <- c_input_first t (fromIntegral n)
  checkTape t
  o <- f (mapIndexed xs (\j x -> Val (primalVal (toVal x)) (first + fromIntegral j) t))
  checkTape t
  let number = fromVal . constVal :: Double -> a
      mine = ownedBy t
      inputs = [Val (primalVal (toVal x)) j t | (j, x) <- zip [first ..] (toList xs)]
  k Session
    { valueOf = \v -> number . primalVal <$> mine v
    , gradientOf = \v -> do
        Val yv yi _ <- mine v
        if yi == -1 || n == 0
          then pure (const (number 0))
          else do
            g <- mallocPlainForeignPtrBytes (8 * n) :: IO (ForeignPtr Double)
            withForeignPtr g $ \p ->
              engine "dr_gradient_range" (c_gradient_range t yv yi first (fromIntegral n) p)
            pure (\j -> number (ioValue (withForeignPtr g (`peekElemOff` j))))
    , jacobianOf = \vs -> do
        ys <- mapM mine vs
        let m = length ys
        if m == 0 || n == 0 then pure (\_ _ -> number 0) else do
          j <- mallocPlainForeignPtrBytes (8 * m * n) :: IO (ForeignPtr Double)
          withForeignPtr j $ \p -> withReals (map pair ys) $ \cm py ->
            engine "dr_jacobian" (c_jacobian_range t cm py first (fromIntegral n) p)
          pure (\r c -> number (ioValue (withForeignPtr j (`peekElemOff` (r * n + c)))))
    , jvpOf = \dirs vs -> do
        ys <- mapM mine vs
        let m = length ys
        if m == 0 then pure [] else do
          withReals (map pair ys) $ \cm py -> withReals (map pair inputs) $ \cn px ->
            withArray (map (primalVal . toVal) dirs) $ \pv ->
              allocaArray m $ \p -> do
                engine "dr_jvp" (quickOrSafe (c_jvp_quick t cm py cn px pv p) (c_jvp t cm py cn px pv p))
                map number <$> peekArray m p
    , hessianOf = Just $ \v -> do
        Val yv yi _ <- mine v
        if yi == -1 then pure (replicate n (replicate n (number 0))) else
          withReals (map pair inputs) $ \cn px -> allocaArray (max 1 (n * n)) $ \p -> do
            engine "dr_hessian" (c_hessian t yv yi cn px p)
            rowsOf n n . map number <$> peekArray (n * n) p
    , hvpOf = Just $ \dirs v -> do
        Val yv yi _ <- mine v
        if yi == -1 then pure (replicate n (number 0)) else
          withReals (map pair inputs) $ \cn px -> withArray (map (primalVal . toVal) dirs) $ \pv ->
            allocaArray (max 1 n) $ \p -> do
              engine "dr_hvp" (c_hvp t yv yi cn px pv p)
              map number <$> peekArray n p
    } o
{-# INLINE ownTape #-}

-- | On the tape of an enclosing differentiation: the inputs are copies of
-- the given values, derivatives are recorded tangent passes.
enclosingTape :: (Traversable f, Element a) => f a -> (f Val -> IO o)
              -> (Session a -> o -> IO r) -> Ptr CTape -> IO r
enclosingTape xs f k t = nestedOn t $ \mark -> do
  copies <- mapM (copyOf t . toD . toVal) (toList xs)
  o <- f (fill xs [Val v i t | D v i <- copies])
  checkTape t
  let mine = ownedBy t
      result (D v i) = fromVal (Val v i t)
      none = fromVal (constVal 0)
      tangent seeds (Val yv yi _) = result <$> tangentSeeded t mark seeds (D yv yi)
      gradient v = do
        y@(Val _ yi _) <- mine v
        if yi == -1
          then pure (map (const none) copies)
          else forM copies $ \(D _ c) -> tangent [(c, constD 1)] y
  k Session
    { valueOf = fmap fromVal . mine
    , gradientOf = \v -> do
        g <- V.fromList <$> gradient v
        pure (g V.!)
    , jacobianOf = \vs -> do
        rows <- V.fromList <$> mapM (fmap V.fromList . gradient) vs
        pure (\r c -> rows V.! r V.! c)
    , jvpOf = \dirs vs -> do
        ys <- mapM mine vs
        let seeds = [(c, toD (toVal d)) | (D _ c, d) <- zip copies dirs]
        forM ys $ \y@(Val _ yi _) -> if yi == -1 then pure none else tangent seeds y
    , hessianOf = Nothing
    , hvpOf = Nothing
    } o

-- | An output of the differentiation on t: active ones must be t's (one of
-- an enclosing differentiation's means this one has to start again there).
ownedBy :: Ptr CTape -> Val -> IO Val
ownedBy t v@(Val _ i u) = when (i /= -1 && u /= t) (throwIO (TapeMismatch t u)) >> pure v
{-# INLINE ownedBy #-}

-- | As the engine's pair of value and id.
pair :: Val -> (Double, Int64)
pair (Val v i _) = (v, i)
{-# INLINE pair #-}

toD :: Val -> D
toD (Val v i _) = D v i
{-# INLINE toD #-}
