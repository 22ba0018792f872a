package archiver.samples;

import io.a2a.server.TransportMetadata;
import io.a2a.spec.TransportProtocol;

/**
 * The transports {@link WireServer} serves, registered with the SDK (META-INF/services) as the Quarkus
 * reference modules register theirs, so that the SDK's agent-card check finds them.
 */
final class WireTransports {
    private WireTransports() {
    }

    public static final class JsonRpc implements TransportMetadata {
        @Override
        public String getTransportProtocol() {
            return TransportProtocol.JSONRPC.asString();
        }
    }

    public static final class Rest implements TransportMetadata {
        @Override
        public String getTransportProtocol() {
            return TransportProtocol.HTTP_JSON.asString();
        }
    }
}
