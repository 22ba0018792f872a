package io.a2a.server.events;

/**
 * What a CDI container does to the SDK's {@link MainEventBusProcessor} (its {@code @PostConstruct} and
 * {@code @PreDestroy}, package-private), for a server run without one; the SDK's own tests do the same.
 */
public final class EventBusLifecycle {
    private EventBusLifecycle() {
    }

    public static void start(MainEventBusProcessor processor) {
        processor.start();
    }

    public static void stop(MainEventBusProcessor processor) {
        processor.stop();
    }
}
