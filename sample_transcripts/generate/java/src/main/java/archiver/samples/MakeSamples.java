package archiver.samples;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import jakarta.persistence.EntityManagerFactory;
import jakarta.persistence.PersistenceConfiguration;

import io.a2a.client.http.A2ACardResolver;
import io.a2a.client.transport.jsonrpc.JSONRPCTransport;
import io.a2a.client.transport.rest.RestTransport;
import io.a2a.client.transport.spi.ClientTransport;
import io.a2a.extras.taskstore.database.jpa.JpaTask;
import io.a2a.extras.taskstore.database.jpa.StandaloneJpaTaskStore;
import io.a2a.jsonrpc.common.json.JsonUtil;
import io.a2a.server.events.EventBusLifecycle;
import io.a2a.server.events.InMemoryQueueManager;
import io.a2a.server.events.MainEventBus;
import io.a2a.server.events.MainEventBusProcessor;
import io.a2a.server.requesthandlers.DefaultRequestHandler;
import io.a2a.server.tasks.InMemoryPushNotificationConfigStore;
import io.a2a.spec.A2AClientException;
import io.a2a.spec.AgentCapabilities;
import io.a2a.spec.AgentCard;
import io.a2a.spec.AgentExtension;
import io.a2a.spec.AgentInterface;
import io.a2a.spec.AgentSkill;
import io.a2a.spec.ListTasksParams;
import io.a2a.spec.Message;
import io.a2a.spec.MessageSendConfiguration;
import io.a2a.spec.MessageSendParams;
import io.a2a.spec.Task;
import io.a2a.spec.TaskQueryParams;
import io.a2a.transport.jsonrpc.handler.JSONRPCHandler;
import io.a2a.transport.rest.handler.RestHandler;

/**
 * Writes the Java SDK's samples: `java MakeSamples scenario.json outdir`. For each run of the scenario, the
 * SDK's server (its request handler over the JPA task store on the run's database) answers the SDK's own
 * JSON-RPC and REST clients on 127.0.0.1; the bodies of the exchanges the scenario names are written to its
 * files unchanged, and what the clients return as the SDK's own JSON ({@code JsonUtil.toJson}).
 */
public final class MakeSamples {
    private final Map<String, ByteArrayOutputStream> files = new LinkedHashMap<>();
    private final Path out;

    private MakeSamples(Path out) {
        this.out = out;
    }

    public static void main(String[] args) throws Exception {
        FixedIds.install();
        Map<String, Object> scenario = Scenario.read(Path.of(args[0]));
        MakeSamples samples = new MakeSamples(Path.of(args[1]));
        AgentCard card = card(Scenario.object(scenario, "card"));
        ScriptedAgent agent = new ScriptedAgent(Scenario.object(scenario, "answers"));
        for (Map<String, Object> run : Scenario.objects(scenario, "runs")) {
            samples.run(run, card, agent);
        }
        samples.write();
        System.exit(0);  // the SDK's event-bus thread is not a daemon
    }

    private void run(Map<String, Object> run, AgentCard card, ScriptedAgent agent) throws Exception {
        EntityManagerFactory database = new PersistenceConfiguration("a2a-java")
                .managedClass(JpaTask.class)
                .property(PersistenceConfiguration.JDBC_URL, Scenario.text(run, "jdbc"))
                .property(PersistenceConfiguration.SCHEMAGEN_DATABASE_ACTION, "create")
                .createEntityManagerFactory();
        StandaloneJpaTaskStore store = new StandaloneJpaTaskStore(database);
        MainEventBus bus = new MainEventBus();
        InMemoryQueueManager queues = new InMemoryQueueManager(store, bus);
        MainEventBusProcessor processor = new MainEventBusProcessor(bus, store, event -> { }, queues);
        EventBusLifecycle.start(processor);
        ExecutorService executor = Executors.newCachedThreadPool();
        DefaultRequestHandler handler = DefaultRequestHandler.create(agent, store, queues,
                new InMemoryPushNotificationConfigStore(), processor, executor, executor);
        try (WireServer server = new WireServer(new JSONRPCHandler(card, handler, executor),
                new RestHandler(card, handler, executor))) {
            Client client = new Client(server, card);
            for (Map<String, Object> call : Scenario.objects(run, "calls")) {
                client.call(call);
            }
            awaitStored(store, Scenario.objects(run, "calls"));
        }
        EventBusLifecycle.stop(processor);
        executor.shutdown();
        database.close();
    }

    /**
     * Waits until the store holds each asked task in a final state: the SDK persists events on its event-bus
     * thread, after the client has its answer.
     */
    private static void awaitStored(StandaloneJpaTaskStore store, List<Map<String, Object>> calls) throws InterruptedException {
        for (Map<String, Object> call : calls) {
            Map<String, Object> message = Scenario.object(call, "message");
            if (message == null) {
                continue;
            }
            String taskId = Scenario.text(message, "task_id");
            for (int tries = 0; tries < 200 && !isFinal(store.get(taskId)); tries++) {
                Thread.sleep(50);
            }
            if (!isFinal(store.get(taskId))) {
                throw new IllegalStateException("the store never held task " + taskId + " in a final state");
            }
        }
    }

    private static boolean isFinal(Task task) {
        return task != null && task.status().state().isFinal();
    }

    private ByteArrayOutputStream file(String name) {
        return files.computeIfAbsent(name, n -> new ByteArrayOutputStream());
    }

    private void write() throws Exception {
        for (Map.Entry<String, ByteArrayOutputStream> file : files.entrySet()) {
            Path path = out.resolve(file.getKey());
            Files.createDirectories(path.getParent());
            Files.write(path, file.getValue().toByteArray());
        }
    }

    /** The SDK's client transports, and where each call's bodies and returned objects are written. */
    private final class Client {
        private final WireServer server;
        private final JSONRPCTransport jsonrpc;
        private final RestTransport rest;

        Client(WireServer server, AgentCard card) {
            this.server = server;
            jsonrpc = new JSONRPCTransport(null, card, new AgentInterface("JSONRPC", server.base() + "/jsonrpc"), null);
            rest = new RestTransport(null, card, new AgentInterface("HTTP+JSON", server.base() + "/rest"), null);
        }

        void call(Map<String, Object> call) throws Exception {
            String file = Scenario.text(call, "file");
            boolean whole = "both".equals(call.get("keep"));
            server.recordTo((request, response) -> {
                if (file == null) {
                    return;
                }
                if (whole) {
                    file(file).writeBytes(request);
                    file(file).write('\n');
                }
                file(file).writeBytes(response);
                if (whole) {
                    file(file).write('\n');
                }
            });
            List<Object> returned = returned(call, "rest".equals(call.get("transport")) ? rest : jsonrpc);
            server.awaitExchange();
            String objects = Scenario.text(call, "objects");
            if (objects != null) {
                for (Object object : returned) {
                    file(objects).writeBytes(JsonUtil.toJson(object).getBytes(StandardCharsets.UTF_8));
                    file(objects).write('\n');
                }
            }
        }

        private List<Object> returned(Map<String, Object> call, ClientTransport transport) throws Exception {
            List<Object> returned = new ArrayList<>();
            try {
                switch (Scenario.text(call, "op")) {
                    case "card" -> returned.add(new A2ACardResolver(server.base()).getAgentCard());
                    case "send" -> returned.add(transport.sendMessage(params(call), null));
                    case "stream" -> {
                        transport.sendMessageStreaming(params(call), returned::add, error -> { }, null);
                        return returned;  // the events arrive as the server writes them; awaitExchange waits for the end
                    }
                    case "get" -> returned.add(transport.getTask(new TaskQueryParams(Scenario.text(call, "task_id")), null));
                    case "list" -> returned.add(transport.listTasks(ListTasksParams.builder()
                            .contextId(Scenario.text(call, "context_id"))
                            .includeArtifacts((Boolean) call.get("include_artifacts"))
                            .build(), null));
                    default -> throw new IllegalArgumentException("unknown call " + call.get("op"));
                }
            } catch (A2AClientException expected) {
                if (!Boolean.TRUE.equals(call.get("fails"))) {
                    throw expected;
                }
            }
            return returned;
        }

        private MessageSendParams params(Map<String, Object> call) {
            Message message = Scenario.message(Scenario.object(call, "message"), Message.Role.ROLE_USER);
            // blocking: the answer is the finished task, as a client waiting for its result asks
            MessageSendConfiguration blocking = MessageSendConfiguration.builder().blocking(true).build();
            return MessageSendParams.builder().message(message).configuration(blocking).build();
        }
    }

    private static AgentCard card(Map<String, Object> spec) {
        String url = Scenario.text(spec, "url");
        List<AgentSkill> skills = Scenario.objects(spec, "skills").stream()
                .map(skill -> AgentSkill.builder()
                        .id(Scenario.text(skill, "id"))
                        .name(Scenario.text(skill, "name"))
                        .description(Scenario.text(skill, "description"))
                        .tags(List.of("analytics"))
                        .build())
                .toList();
        return AgentCard.builder()
                .name(Scenario.text(spec, "name"))
                .description(Scenario.text(spec, "description"))
                .version(Scenario.text(spec, "version"))
                .supportedInterfaces(List.of(
                        new AgentInterface("JSONRPC", url + "/jsonrpc"),
                        new AgentInterface("HTTP+JSON", url + "/rest")))
                .capabilities(AgentCapabilities.builder()
                        .streaming(true)
                        .pushNotifications(false)
                        .extensions(List.of(AgentExtension.builder()
                                .uri(Scenario.text(spec, "extension_uri"))
                                .description("Quantitative results carry Citations v1 data Parts.")
                                .required(false)
                                .build()))
                        .build())
                .defaultInputModes(List.of("text/plain"))
                .defaultOutputModes(List.of("text/plain", "application/json", Scenario.text(spec, "media_type")))
                .skills(skills)
                .build();
    }
}
