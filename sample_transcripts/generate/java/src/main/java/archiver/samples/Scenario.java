package archiver.samples;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.google.gson.JsonElement;
import com.google.gson.JsonParser;
import com.google.gson.JsonPrimitive;

import io.a2a.spec.DataPart;
import io.a2a.spec.Message;
import io.a2a.spec.Part;
import io.a2a.spec.TaskState;
import io.a2a.spec.TaskStatus;
import io.a2a.spec.TextPart;

/**
 * What make_samples_java.py asks for, read from its JSON: plain maps and lists, numbers written without a
 * fraction as Long (as an agent's Java code writes 1210), others as Double. The scenario itself (questions,
 * answers, citations, ids, times) is defined once, in Python, beside the manifest fragment it yields.
 */
final class Scenario {
    private Scenario() {
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> read(Path path) throws IOException {
        return (Map<String, Object>) plain(JsonParser.parseString(Files.readString(path, StandardCharsets.UTF_8)));
    }

    static Object plain(JsonElement json) {
        if (json.isJsonObject()) {
            Map<String, Object> map = new LinkedHashMap<>();
            json.getAsJsonObject().entrySet().forEach(e -> map.put(e.getKey(), plain(e.getValue())));
            return map;
        }
        if (json.isJsonArray()) {
            List<Object> list = new ArrayList<>();
            json.getAsJsonArray().forEach(item -> list.add(plain(item)));
            return list;
        }
        if (json.isJsonNull()) {
            return null;
        }
        JsonPrimitive primitive = json.getAsJsonPrimitive();
        if (primitive.isBoolean()) {
            return primitive.getAsBoolean();
        }
        if (primitive.isNumber()) {
            String literal = primitive.getAsString();
            return literal.matches("-?\\d+") ? (Object) Long.valueOf(literal) : (Object) Double.valueOf(literal);
        }
        return primitive.getAsString();
    }

    static String text(Map<String, Object> map, String key) {
        return (String) map.get(key);
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> object(Map<String, Object> map, String key) {
        return (Map<String, Object>) map.get(key);
    }

    @SuppressWarnings("unchecked")
    static List<Map<String, Object>> objects(Map<String, Object> map, String key) {
        return (List<Map<String, Object>>) map.getOrDefault(key, List.of());
    }

    /** `{"text": ...}` or `{"data": ..., "metadata": ...}` as the SDK's Part. */
    static Part<?> part(Map<String, Object> part) {
        Map<String, Object> metadata = object(part, "metadata");
        if (part.containsKey("text")) {
            return new TextPart(text(part, "text"), metadata);
        }
        return new DataPart(part.get("data"), metadata);
    }

    static List<Part<?>> parts(Map<String, Object> holder) {
        return objects(holder, "parts").stream().<Part<?>>map(Scenario::part).toList();
    }

    static Message message(Map<String, Object> spec, Message.Role role) {
        return Message.builder()
                .role(role)
                .parts(parts(spec))
                .messageId(text(spec, "message_id"))
                .taskId(text(spec, "task_id"))
                .contextId(text(spec, "context_id"))
                .build();
    }

    static TaskStatus status(Map<String, Object> event, Message message) {
        TaskState state = TaskState.valueOf("TASK_STATE_" + text(event, "state").toUpperCase().replace('-', '_'));
        return new TaskStatus(state, message, OffsetDateTime.parse(text(event, "at")));
    }
}
