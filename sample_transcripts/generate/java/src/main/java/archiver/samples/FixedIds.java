package archiver.samples;

import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.Provider;
import java.security.SecureRandomSpi;
import java.security.Security;

/**
 * Fixed ids: the SDK's client names each JSON-RPC request with {@code UUID.randomUUID()}, which draws from the
 * JVM's default {@code SecureRandom}. Installed first among the security providers before any UUID is drawn,
 * this provider makes that default a counter-mode SHA-256 stream from a fixed seed, so the ids repeat run
 * after run (as the Python generators seed {@code uuid4}). Nothing here leaves 127.0.0.1, so nothing relies on
 * these bytes being secret.
 */
public final class FixedIds {
    private FixedIds() {
    }

    public static void install() {
        Security.insertProviderAt(new Provider("ArchiverSamplesFixedIds", "1", "a seeded SecureRandom for samples") {
            {
                put("SecureRandom.Seeded", SeededRandom.class.getName());
            }
        }, 1);
    }

    public static final class SeededRandom extends SecureRandomSpi {
        private long counter;

        @Override
        protected void engineSetSeed(byte[] seed) {
            // the stream stays the fixed one
        }

        @Override
        protected void engineNextBytes(byte[] bytes) {
            for (int at = 0; at < bytes.length; at += 32) {
                byte[] block = sha256(ByteBuffer.allocate(Long.BYTES).putLong(counter++).array());
                System.arraycopy(block, 0, bytes, at, Math.min(32, bytes.length - at));
            }
        }

        @Override
        protected byte[] engineGenerateSeed(int length) {
            byte[] seed = new byte[length];
            engineNextBytes(seed);
            return seed;
        }

        private static byte[] sha256(byte[] input) {
            try {
                return MessageDigest.getInstance("SHA-256").digest(input);
            } catch (NoSuchAlgorithmException e) {
                throw new IllegalStateException(e);
            }
        }
    }
}
