package dev.eddy.persons;

import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;
import dev.eddy.events.CapturedEvent;
import java.time.Instant;

/**
 * What the identity processor acts on, keyed {@code token:distinct_id} like the ingest topics it is
 * co-partitioned with: the owner of one distinct id's mapping sees every command about that distinct id, in order.
 */
@JsonTypeInfo(use = JsonTypeInfo.Id.NAME, property = "type")
@JsonSubTypes({
        @JsonSubTypes.Type(value = IdentityCommand.Ingest.class, name = "ingest"),
        @JsonSubTypes.Type(value = IdentityCommand.Link.class, name = "link"),
        @JsonSubTypes.Type(value = IdentityCommand.Remap.class, name = "remap"),
        @JsonSubTypes.Type(value = IdentityCommand.Release.class, name = "release")})
public sealed interface IdentityCommand {
    /**
     * What a distinct id's owner does with each kind of command. Adding a kind of command fails the build until every handler
     * takes it.
     */
    interface Handler {
        void ingest(Ingest command);

        void link(Link command);

        void remap(Remap command);

        void release(Release command);
    }

    /** Calls {@code handler}'s method for this kind of command. */
    void handleWith(Handler handler);

    /**
     * A captured event (from overflow, re-keyed; events of the ingest and historical topics arrive directly).
     *
     * @param event      the event
     * @param historical whether it came from a historical migration (kept longer for de-duplication)
     */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record Ingest(CapturedEvent event, boolean historical) implements IdentityCommand {
        @Override
        public void handleWith(final Handler handler) {
            handler.ingest(this);
        }

    }

    /**
     * Sent to the owner of {@code otherDistinctId} by the owner of {@code mergeIntoDistinctId} when an event asks
     * to merge the two ({@code $identify} with {@code $anon_distinct_id}, {@code $create_alias},
     * {@code $merge_dangerously}).
     *
     * @param mergeIntoPerson the person {@code mergeIntoDistinctId} resolved to when the event was processed
     * @param mergeIntoWasNew whether that person was created by this very event
     * @param dangerous       {@code $merge_dangerously}: merge even an identified person
     */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record Link(long projectId, String token, String otherDistinctId, String mergeIntoDistinctId, String mergeIntoPerson,
                boolean mergeIntoWasNew, boolean dangerous, Instant timestamp) implements IdentityCommand {
        @Override
        public void handleWith(final Handler handler) {
            handler.link(this);
        }

    }

    /** From then on, {@code distinctId} resolves to {@code personId} (its person was merged). */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record Remap(long projectId, String distinctId, String personId) implements IdentityCommand {
        @Override
        public void handleWith(final Handler handler) {
            handler.remap(this);
        }

    }

    /**
     * A merge {@code distinctId} took part in is carried out (or refused): its events held since are applied now, in
     * order, to the person it resolves to. Sent after every remap the merge caused, on the same partition, so they
     * come first.
     */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record Release(long projectId, String distinctId) implements IdentityCommand {
        @Override
        public void handleWith(final Handler handler) {
            handler.release(this);
        }

    }
}
