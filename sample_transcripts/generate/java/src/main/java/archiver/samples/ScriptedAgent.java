package archiver.samples;

import java.util.List;
import java.util.Map;

import io.a2a.server.agentexecution.AgentExecutor;
import io.a2a.server.agentexecution.RequestContext;
import io.a2a.server.tasks.AgentEmitter;
import io.a2a.spec.A2AError;
import io.a2a.spec.Artifact;
import io.a2a.spec.Event;
import io.a2a.spec.Message;
import io.a2a.spec.Task;
import io.a2a.spec.TaskArtifactUpdateEvent;
import io.a2a.spec.TaskStatusUpdateEvent;
import io.a2a.spec.TextPart;
import io.a2a.spec.UnsupportedOperationError;

/**
 * The agent: answers each question with the events its script lists, every id and time given, through the
 * SDK's {@link AgentEmitter}. It emits the Task itself first (the SDK would stamp a SUBMITTED status of its own
 * with the wall clock), then status and artifact updates.
 */
final class ScriptedAgent implements AgentExecutor {
    private final Map<String, Object> answers;

    ScriptedAgent(Map<String, Object> answers) {
        this.answers = answers;
    }

    @Override
    @SuppressWarnings("unchecked")
    public void execute(RequestContext context, AgentEmitter emitter) throws A2AError {
        String question = ((TextPart) context.getMessage().parts().get(0)).text();
        for (Map<String, Object> event : (List<Map<String, Object>>) answers.get(question)) {
            emitter.emitEvent(event(event, context));
        }
    }

    @Override
    public void cancel(RequestContext context, AgentEmitter emitter) throws A2AError {
        throw new UnsupportedOperationError();
    }

    private static Event event(Map<String, Object> event, RequestContext context) {
        String taskId = context.getTaskId();
        String contextId = context.getContextId();
        return switch (Scenario.text(event, "kind")) {
            case "task" -> Task.builder()
                    .id(taskId)
                    .contextId(contextId)
                    .status(Scenario.status(event, null))
                    .history(List.of(context.getMessage()))
                    .build();
            case "status" -> TaskStatusUpdateEvent.builder()
                    .taskId(taskId)
                    .contextId(contextId)
                    .status(Scenario.status(event, agentMessage(event, taskId, contextId)))
                    .build();
            case "artifact" -> TaskArtifactUpdateEvent.builder()
                    .taskId(taskId)
                    .contextId(contextId)
                    .artifact(Artifact.builder()
                            .artifactId(Scenario.text(event, "artifact_id"))
                            .name(Scenario.text(event, "name"))
                            .parts(Scenario.parts(event))
                            .build())
                    .append((Boolean) event.get("append"))
                    .lastChunk((Boolean) event.get("last_chunk"))
                    .build();
            default -> throw new IllegalArgumentException("unknown event kind " + event.get("kind"));
        };
    }

    private static Message agentMessage(Map<String, Object> event, String taskId, String contextId) {
        Map<String, Object> spec = Scenario.object(event, "message");
        if (spec == null) {
            return null;
        }
        return Message.builder(Scenario.message(spec, Message.Role.ROLE_AGENT)).taskId(taskId).contextId(contextId).build();
    }
}
