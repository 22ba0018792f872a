package io.a2a.extras.taskstore.database.jpa;

import java.lang.annotation.Annotation;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;

import jakarta.enterprise.event.Event;
import jakarta.enterprise.event.NotificationOptions;
import jakarta.enterprise.util.TypeLiteral;
import jakarta.persistence.EntityManagerFactory;

import io.a2a.jsonrpc.common.wrappers.ListTasksResult;
import io.a2a.spec.ListTasksParams;
import io.a2a.spec.Task;

/**
 * The SDK's {@link JpaDatabaseTaskStore} outside a CDI container: what Quarkus injects (the entity manager,
 * the finalized-task event, the grace period) is set here, and each call runs in its own transaction, as
 * its {@code @Transactional} methods do under Quarkus. Calls are serialised (an EntityManager is not
 * thread-safe; the server calls the store from its request and event-bus threads).
 */
public final class StandaloneJpaTaskStore extends JpaDatabaseTaskStore {
    private final EntityManagerFactory factory;

    public StandaloneJpaTaskStore(EntityManagerFactory factory) {
        this.factory = factory;
        this.taskFinalizedEvent = new IgnoredEvents<>();
        this.gracePeriodSeconds = 15;  // the a2a.replication.grace-period-seconds default (a2a-defaults.properties)
    }

    @Override
    public synchronized void save(Task task, boolean isReplicated) {
        inTransaction(() -> { super.save(task, isReplicated); return null; });
    }

    @Override
    public synchronized Task get(String taskId) {
        return inTransaction(() -> super.get(taskId));
    }

    @Override
    public synchronized void delete(String taskId) {
        inTransaction(() -> { super.delete(taskId); return null; });
    }

    @Override
    public synchronized ListTasksResult list(ListTasksParams params) {
        return inTransaction(() -> super.list(params));
    }

    @Override
    public synchronized boolean isTaskActive(String taskId) {
        return inTransaction(() -> super.isTaskActive(taskId));
    }

    @Override
    public synchronized boolean isTaskFinalized(String taskId) {
        return inTransaction(() -> super.isTaskFinalized(taskId));
    }

    private <T> T inTransaction(Supplier<T> work) {
        em = factory.createEntityManager();
        try {
            em.getTransaction().begin();
            T result = work.get();
            em.getTransaction().commit();
            return result;
        } finally {
            if (em.getTransaction().isActive()) {
                em.getTransaction().rollback();
            }
            em.close();
        }
    }

    /** No observer of finalized tasks here (Quarkus uses them for replication). */
    private static final class IgnoredEvents<T> implements Event<T> {
        @Override public void fire(T event) { }
        @Override public <U extends T> CompletionStage<U> fireAsync(U event) { throw new UnsupportedOperationException(); }
        @Override public <U extends T> CompletionStage<U> fireAsync(U event, NotificationOptions options) { throw new UnsupportedOperationException(); }
        @Override public Event<T> select(Annotation... qualifiers) { return this; }
        @Override public <U extends T> Event<U> select(Class<U> subtype, Annotation... qualifiers) { return new IgnoredEvents<>(); }
        @Override public <U extends T> Event<U> select(TypeLiteral<U> subtype, Annotation... qualifiers) { return new IgnoredEvents<>(); }
    }
}
