package dev.eddy.topology.identity;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.config.StreamsConfig;
import dev.eddy.events.CapturedEvent;
import dev.eddy.events.EnrichedEvent;
import dev.eddy.groups.GroupAttachment;
import dev.eddy.groups.GroupTypes;
import dev.eddy.persons.IdentityCommand;
import dev.eddy.persons.PersonCommand;
import dev.eddy.persons.PersonIds;
import dev.eddy.persons.ProjectCommand;
import dev.eddy.stores.StoreNames;
import dev.eddy.topology.internal.Keys;
import dev.eddy.topology.internal.Warnings;
import java.util.Optional;
import java.util.Set;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * The owner of a set of distinct ids (partitioned by {@code token:distinct_id}, like the ingest topics): drops
 * duplicate events, resolves each event's distinct id to its person (creating the person's id on first sight),
 * starts merges, attaches group keys, and sends the event on to its person's owner.
 *
 * <p>A merge event of distinct id D naming another id O ({@code $identify} with {@code $anon_distinct_id},
 * {@code $create_alias} or {@code $merge_dangerously} with {@code alias}) cannot see O's mapping, which another
 * partition owns: it sends a {@link IdentityCommand.Link} to O's owner, which adds what it knows and passes the
 * request to the project's coordinator, the only place merges are decided. Until the merge is carried out, the
 * events of both ids wait ({@link HeldEvents}), the merge event's own person updates included: they are then applied,
 * in order, to the merged person, as PostHog applies a distinct id's events after its merge.
 */
public final class IdentityProcessor implements Processor<String, IdentityCommand, String, Object> {
    public static final String TO_IDENTITY = "identity-to-identity-commands";
    public static final String TO_PROJECT = "identity-to-project-commands";
    public static final String TO_PERSONS = "identity-to-person-commands";
    public static final String TO_GROUPS = "identity-to-group-commands";
    public static final String TO_ENRICHED = "identity-to-enriched";

    /** Events that are only about persons or groups: meaningless, and dropped, without person processing. */
    private static final Set<String> PERSON_EVENTS = Set.of("$identify", "$create_alias", "$merge_dangerously",
            GroupAttachment.GROUP_IDENTIFY);

    private final StreamsConfig.Dedup dedupConfig;
    private ProcessorContext<String, Object> context;
    private KeyValueStore<String, String> distinctIds;
    private KeyValueStore<String, GroupTypes> groupTypes;
    private Deduplicator dedup;
    private HeldEvents held;
    private Warnings warnings;

    public IdentityProcessor(final StreamsConfig.Dedup dedupConfig) {
        this.dedupConfig = dedupConfig;
    }

    @Override
    public void init(final ProcessorContext<String, Object> context) {
        this.context = context;
        this.distinctIds = context.getStateStore(StoreNames.DISTINCT_IDS);
        this.groupTypes = context.getStateStore(StoreNames.GROUP_TYPES);
        this.dedup = new Deduplicator(context.getStateStore(StoreNames.DEDUP_IDS),
                context.getStateStore(StoreNames.DEDUP_HISTORICAL_IDS), dedupConfig.retention(),
                dedupConfig.historicalRetention());
        this.held = new HeldEvents(context.getStateStore(StoreNames.IDENTITY_HOLDS));
        this.warnings = new Warnings(context, "identity");
    }

    @Override
    public void process(final Record<String, IdentityCommand> record) {
        record.value().handleWith(new IdentityCommand.Handler() {
            @Override
            public void ingest(final IdentityCommand.Ingest command) {
                IdentityProcessor.this.ingest(record, command.event(), command.historical());
            }

            @Override
            public void link(final IdentityCommand.Link command) {
                IdentityProcessor.this.link(record, command);
            }

            @Override
            public void remap(final IdentityCommand.Remap command) {
                distinctIds.put(Keys.scoped(command.projectId(), command.distinctId()), command.personId());
            }

            @Override
            public void release(final IdentityCommand.Release command) {
                held.release(command.projectId(), command.distinctId(),
                        (event, linked, timestamp) -> resolve(record.withTimestamp(timestamp), event, linked));
            }
        });
    }

    private void ingest(final Record<String, ?> record, final CapturedEvent event, final boolean historical) {
        if (!dedup.firstTime(event, historical)) {
            warnings.record("duplicate_event");
            return;
        }
        if (held.held(event.projectId(), event.distinctId())) {
            held.append(event, false, record.timestamp());
        } else if (resolve(record, event, false)) {
            held.hold(event.projectId(), event.distinctId());
            held.append(event, true, record.timestamp());
        }
    }

    /**
     * Resolves the event's person and sends it on, or asks for the merge it names.
     *
     * @param linked whether the event's merge was already asked for (it waited for it): only its updates remain
     * @return whether it asked for a merge: the event and the later ones of its distinct id must then wait for it
     */
    private boolean resolve(final Record<String, ?> record, final CapturedEvent event, final boolean linked) {
        final long project = event.projectId();
        final String key = Keys.scoped(project, event.distinctId());
        if (personless(event)) {
            if (PERSON_EVENTS.contains(event.event())) {
                warnings.record("invalid_event_when_process_person_profile_is_false");
                return false;
            }
            final String person = Optional.ofNullable(distinctIds.get(key))
                    .orElseGet(() -> PersonIds.personUuid(project, event.distinctId()));
            final EnrichedEvent enriched = new EnrichedEvent(EnrichedEvent.VERSION, event, person, true, null);
            context.forward(record.withKey(enriched.key()).withValue(enriched), TO_ENRICHED);
            return false;
        }
        String person = distinctIds.get(key);
        final boolean created = person == null;
        if (created) {
            person = PersonIds.personUuid(project, event.distinctId());
            distinctIds.put(key, person);
        }
        if (!linked) {
            final Optional<String> other = otherDistinctId(event).filter(id -> !id.equals(event.distinctId()));
            if (other.isPresent()) {
                if (!PersonIds.isIllegalForMerge(event.distinctId()) && !PersonIds.isIllegalForMerge(other.get())) {
                    final IdentityCommand.Link link = new IdentityCommand.Link(project, event.token(), other.get(),
                            event.distinctId(), person, created, "$merge_dangerously".equals(event.event()), event.timestamp());
                    context.forward(record.withKey(Keys.distinctIdRoute(event.token(), other.get())).withValue(link), TO_IDENTITY);
                    return true;
                }
                warnings.record("cannot_merge_with_illegal_distinct_id");
            }
        }

        final Set<String> named = GroupAttachment.typesNamed(event);
        // Most events name no group: they need no read of the project's group types.
        final GroupTypes known = named.isEmpty() ? GroupTypes.none(project)
                : Optional.ofNullable(groupTypes.get(Keys.project(project))).orElse(GroupTypes.none(project));
        if (!known.types().keySet().containsAll(named)) {
            // A type this instance has no index for yet: the coordinator assigns it and sends the event on.
            context.forward(record.withKey(Keys.project(project)).withValue(new ProjectCommand.AssignGroupTypes(event, person)),
                    TO_PROJECT);
            return false;
        }
        final GroupAttachment.Resolved groups = GroupAttachment.resolve(event, known);
        GroupAttachment.addGroupProperties(event, groups.groups());
        groups.groupSet().ifPresent(set -> context.forward(record
                .withKey(dev.eddy.groups.GroupState.key(project, set.groupTypeIndex(), set.groupKey())).withValue(set), TO_GROUPS));
        context.forward(record.withKey(Keys.scoped(project, person))
                .withValue(PersonCommand.Apply.of(event, person, groups.groups())), TO_PERSONS);
        return false;
    }

    /**
     * At the owner of the other distinct id: add its person (or map it to the merge target) and ask the coordinator.
     * The id's later events wait for the merge.
     */
    private void link(final Record<String, ?> record, final IdentityCommand.Link link) {
        held.hold(link.projectId(), link.otherDistinctId());
        final String key = Keys.scoped(link.projectId(), link.otherDistinctId());
        final String other = distinctIds.get(key);
        if (other == null) {
            // A new distinct id joins the merge target whatever else happens: map it now, so its next events
            // already go there instead of creating a person of their own.
            distinctIds.put(key, link.mergeIntoPerson());
        }
        final ProjectCommand.Merge merge = new ProjectCommand.Merge(link.projectId(), link.token(),
                link.mergeIntoDistinctId(), link.mergeIntoPerson(), link.mergeIntoWasNew(), link.otherDistinctId(), other,
                link.dangerous(), link.timestamp());
        context.forward(record.withKey(Keys.project(link.projectId())).withValue(merge), TO_PROJECT);
    }

    /** Only a strict boolean false turns person processing off, as in PostHog. */
    static boolean personless(final CapturedEvent event) {
        final JsonNode flag = event.properties().get("$process_person_profile");
        return flag != null && flag.isBoolean() && !flag.booleanValue();
    }

    /** The distinct id a merge event names, as PostHog stringifies it. */
    static Optional<String> otherDistinctId(final CapturedEvent event) {
        final JsonNode properties = event.properties();
        switch (event.event()) {
            case "$identify":
                return properties.has("$anon_distinct_id") ? Optional.of(text(properties.get("$anon_distinct_id")))
                        : Optional.empty();
            case "$create_alias":
            case "$merge_dangerously":
                final JsonNode alias = properties.get("alias");
                return truthy(alias) ? Optional.of(text(alias)) : Optional.empty();
            default:
                return Optional.empty();
        }
    }

    private static String text(final JsonNode value) {
        return value.isNull() ? "null" : value.isTextual() ? value.asText() : value.toString();
    }

    private static boolean truthy(final JsonNode value) {
        if (value == null || value.isNull() || value.isMissingNode()) {
            return false;
        }
        if (value.isTextual()) {
            return !value.asText().isEmpty();
        }
        if (value.isNumber()) {
            return value.asDouble() != 0;
        }
        return !value.isBoolean() || value.booleanValue();
    }
}
