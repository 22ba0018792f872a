package archiver.samples;

import static io.a2a.server.ServerCallContext.TRANSPORT_KEY;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.Flow;
import java.util.concurrent.Semaphore;

import com.google.protobuf.MessageOrBuilder;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

import io.a2a.common.A2AHeaders;
import io.a2a.grpc.utils.JSONRPCUtils;
import io.a2a.grpc.utils.ProtoUtils;
import io.a2a.jsonrpc.common.json.JsonProcessingException;
import io.a2a.jsonrpc.common.json.JsonUtil;
import io.a2a.jsonrpc.common.wrappers.A2AErrorResponse;
import io.a2a.jsonrpc.common.wrappers.A2ARequest;
import io.a2a.jsonrpc.common.wrappers.A2AResponse;
import io.a2a.jsonrpc.common.wrappers.GetTaskRequest;
import io.a2a.jsonrpc.common.wrappers.GetTaskResponse;
import io.a2a.jsonrpc.common.wrappers.ListTasksRequest;
import io.a2a.jsonrpc.common.wrappers.ListTasksResponse;
import io.a2a.jsonrpc.common.wrappers.SendMessageRequest;
import io.a2a.jsonrpc.common.wrappers.SendMessageResponse;
import io.a2a.jsonrpc.common.wrappers.SendStreamingMessageRequest;
import io.a2a.server.ServerCallContext;
import io.a2a.server.auth.UnauthenticatedUser;
import io.a2a.server.extensions.A2AExtensions;
import io.a2a.server.util.sse.SseFormatter;
import io.a2a.spec.A2AError;
import io.a2a.spec.InternalError;
import io.a2a.spec.TransportProtocol;
import io.a2a.spec.UnsupportedOperationError;
import io.a2a.transport.jsonrpc.handler.JSONRPCHandler;
import io.a2a.transport.rest.handler.RestHandler;
import io.a2a.transport.rest.handler.RestHandler.HTTPRestResponse;
import io.a2a.transport.rest.handler.RestHandler.HTTPRestStreamingResponse;

/**
 * The SDK's JSON-RPC and REST handlers behind the JDK's own HTTP server on 127.0.0.1, in place of the Quarkus
 * reference server: each route does what the reference route of v1.0.0.Alpha3 does (the same handler call, the
 * same serialisation: {@code JSONRPCUtils}/{@code ProtoUtils} for JSON-RPC bodies, {@code SseFormatter} for
 * events), so the bodies are the ones the reference server sends. Each exchange's request and response bodies
 * are handed to the {@link Recorder} byte for byte.
 */
final class WireServer implements AutoCloseable {
    /** Where the bodies of the exchange in progress go. */
    interface Recorder {
        void exchange(byte[] request, byte[] response);
    }

    private final HttpServer server;
    private final JSONRPCHandler jsonrpc;
    private final RestHandler rest;
    private final Semaphore finished = new Semaphore(0);
    private volatile Recorder recorder = (request, response) -> { };

    WireServer(JSONRPCHandler jsonrpc, RestHandler rest) throws IOException {
        this.jsonrpc = jsonrpc;
        this.rest = rest;
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.setExecutor(Executors.newCachedThreadPool());
        server.createContext("/.well-known/agent-card.json", this::agentCard);
        server.createContext("/jsonrpc", this::jsonrpc);
        server.createContext("/rest/", this::rest);
        server.start();
    }

    String base() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    /** Sends the next exchanges' bodies to `to`. */
    void recordTo(Recorder to) {
        recorder = to;
    }

    /** Waits until the server has written the last byte of the exchange the client began. */
    void awaitExchange() throws InterruptedException {
        finished.acquire();
    }

    @Override
    public void close() {
        server.stop(0);
    }

    private void agentCard(HttpExchange exchange) throws IOException {
        try {
            respond(exchange, new byte[0], 200, "application/json", JsonUtil.toJson(jsonrpc.getAgentCard()));
        } catch (JsonProcessingException e) {
            throw new IOException(e);
        }
    }

    private void jsonrpc(HttpExchange exchange) throws IOException {
        byte[] body = exchange.getRequestBody().readAllBytes();
        ServerCallContext context = context(exchange, TransportProtocol.JSONRPC);
        A2AResponse<?> response;
        try {
            A2ARequest<?> request = JSONRPCUtils.parseRequestBody(new String(body, StandardCharsets.UTF_8), "");
            if (request instanceof SendStreamingMessageRequest streaming) {
                stream(exchange, body, jsonrpc.onMessageSendStream(streaming, context),
                        (event, id) -> SseFormatter.formatResponseAsSSE(event, id));
                return;
            }
            response = nonStreaming(request, context);
        } catch (A2AError e) {
            response = new A2AErrorResponse(e);
        } catch (Exception e) {
            response = new A2AErrorResponse(new InternalError(e.getMessage()));
        }
        respond(exchange, body, 200, "application/json", serialized(response));
    }

    private A2AResponse<?> nonStreaming(A2ARequest<?> request, ServerCallContext context) {
        if (request instanceof SendMessageRequest send) {
            return jsonrpc.onMessageSend(send, context);
        }
        if (request instanceof GetTaskRequest get) {
            return jsonrpc.onGetTask(get, context);
        }
        if (request instanceof ListTasksRequest list) {
            return jsonrpc.onListTasks(list, context);
        }
        return new A2AErrorResponse(request.getId(), new UnsupportedOperationError());
    }

    /** The reference server's `serializeResponse`, for the responses this server answers. */
    private static String serialized(A2AResponse<?> response) {
        if (response instanceof A2AErrorResponse error) {
            return JSONRPCUtils.toJsonRPCErrorResponse(error.getId(), error.getError());
        }
        if (response.getError() != null) {
            return JSONRPCUtils.toJsonRPCErrorResponse(response.getId(), response.getError());
        }
        MessageOrBuilder proto;
        if (response instanceof GetTaskResponse r) {
            proto = ProtoUtils.ToProto.task(r.getResult());
        } else if (response instanceof SendMessageResponse r) {
            proto = ProtoUtils.ToProto.taskOrMessage(r.getResult());
        } else if (response instanceof ListTasksResponse r) {
            proto = ProtoUtils.ToProto.listTasksResult(r.getResult());
        } else {
            throw new IllegalArgumentException("Unknown response type: " + response.getClass().getName());
        }
        return JSONRPCUtils.toJsonRPCResultResponse(response.getId(), proto);
    }

    private void rest(HttpExchange exchange) throws IOException {
        byte[] body = exchange.getRequestBody().readAllBytes();
        String path = exchange.getRequestURI().getPath().substring("/rest".length());
        Map<String, String> query = query(exchange.getRequestURI().getRawQuery());
        ServerCallContext context = context(exchange, TransportProtocol.HTTP_JSON);
        String text = new String(body, StandardCharsets.UTF_8);
        HTTPRestResponse response;
        if (path.equals("/message:send")) {
            response = rest.sendMessage(context, "", text);
        } else if (path.equals("/message:stream")) {
            response = rest.sendStreamingMessage(context, "", text);
            if (response instanceof HTTPRestStreamingResponse streaming) {
                stream(exchange, body, streaming.getPublisher(), SseFormatter::formatJsonAsSSE);
                return;
            }
        } else if (path.equals("/tasks")) {
            response = rest.listTasks(context, "", query.get("contextId"), null, null, null, null, null,
                    query.containsKey("includeArtifacts") ? Boolean.valueOf(query.get("includeArtifacts")) : null);
        } else if (path.startsWith("/tasks/")) {
            Integer historyLength = query.containsKey("historyLength") ? Integer.valueOf(query.get("historyLength")) : null;
            response = rest.getTask(context, "", path.substring("/tasks/".length()), historyLength);
        } else {
            response = rest.createErrorResponse(new UnsupportedOperationError());
        }
        respond(exchange, body, response.getStatusCode(), response.getContentType(), response.getBody());
    }

    interface EventFormat<T> {
        String format(T event, long id);
    }

    /** Writes each event of `events` as the SDK formats it, one at a time, as the reference server does. */
    private <T> void stream(HttpExchange exchange, byte[] request, Flow.Publisher<T> events, EventFormat<T> format)
            throws IOException {
        exchange.getResponseHeaders().set("Content-Type", "text/event-stream");
        exchange.sendResponseHeaders(200, 0);
        OutputStream out = exchange.getResponseBody();
        ByteArrayOutputStream written = new ByteArrayOutputStream();
        Semaphore done = new Semaphore(0);
        events.subscribe(new Flow.Subscriber<T>() {
            private Flow.Subscription subscription;
            private long id;

            @Override
            public void onSubscribe(Flow.Subscription subscription) {
                this.subscription = subscription;
                subscription.request(1);
            }

            @Override
            public void onNext(T event) {
                byte[] bytes = format.format(event, id++).getBytes(StandardCharsets.UTF_8);
                try {
                    out.write(bytes);
                    out.flush();
                } catch (IOException e) {
                    subscription.cancel();
                    done.release();
                    return;
                }
                written.writeBytes(bytes);
                subscription.request(1);
            }

            @Override
            public void onError(Throwable throwable) {
                done.release();
            }

            @Override
            public void onComplete() {
                done.release();
            }
        });
        done.acquireUninterruptibly();
        recorder.exchange(request, written.toByteArray());
        exchange.close();
        finished.release();
    }

    private void respond(HttpExchange exchange, byte[] request, int status, String type, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", type);
        exchange.sendResponseHeaders(status, bytes.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(bytes);
        }
        recorder.exchange(request, bytes);
        finished.release();
    }

    private static ServerCallContext context(HttpExchange exchange, TransportProtocol transport) {
        Map<String, Object> state = new HashMap<>();
        state.put(TRANSPORT_KEY, transport);
        List<String> extensions = exchange.getRequestHeaders().getOrDefault(A2AHeaders.X_A2A_EXTENSIONS, List.of());
        Set<String> requested = A2AExtensions.getRequestedExtensions(extensions);
        String version = exchange.getRequestHeaders().getFirst(A2AHeaders.X_A2A_VERSION);
        return new ServerCallContext(UnauthenticatedUser.INSTANCE, state, requested, version);
    }

    private static Map<String, String> query(String raw) {
        Map<String, String> params = new HashMap<>();
        if (raw == null) {
            return params;
        }
        for (String pair : raw.split("&")) {
            String[] kv = pair.split("=", 2);
            params.put(decode(kv[0]), kv.length > 1 ? decode(kv[1]) : "");
        }
        return params;
    }

    private static String decode(String text) {
        return URLDecoder.decode(text, StandardCharsets.UTF_8);
    }
}
