package dev.eddy.topology.persons;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.persons.IdentityCommand;
import dev.eddy.persons.PersonCommand;
import dev.eddy.persons.PersonIds;
import dev.eddy.persons.PersonMerge;
import dev.eddy.persons.PersonState;
import dev.eddy.persons.PropertyUpdates;
import dev.eddy.serde.Json;
import dev.eddy.stores.StoreNames;
import dev.eddy.timelines.TimelineEvent;
import dev.eddy.topology.internal.Keys;
import dev.eddy.topology.trends.TimelineProcessor;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * The owner of a set of persons (keyed {@code project:person_uuid}): applies each event's property updates in
 * the order the events arrive, hands the event with its person to the timelines, and carries out the coordinator's
 * merges, releasing the events their distinct ids held for them. A person merged away keeps a stub that forwards
 * whatever still reaches it to its survivor, so an event routed by a distinct-id mapping that is not yet updated still lands on the right person.
 */
public final class PersonsProcessor implements Processor<String, PersonCommand, String, Object> {
    public static final String TO_PERSONS = "persons-to-person-commands";
    public static final String TO_IDENTITY = "persons-to-identity-commands";
    /**
     * The timeline processor, this one's child in the same task: a person and its timeline share the partition of
     * {@code project:person}, so an event goes on to its timeline without another topic.
     */
    public static final String TO_TIMELINES = "event-timelines";
    public static final String TO_MERGES = "persons-to-merges";
    /** PostHog's person property naming the event that created the person. */
    private static final String CREATOR_EVENT = "$creator_event_uuid";

    private ProcessorContext<String, Object> context;
    private KeyValueStore<String, PersonState> persons;

    @Override
    public void init(final ProcessorContext<String, Object> context) {
        this.context = context;
        this.persons = context.getStateStore(StoreNames.PERSONS);
    }

    @Override
    public void process(final Record<String, PersonCommand> record) {
        final PersonCommand command = record.value();
        if (command == null) {
            return;
        }
        final String key = Keys.scoped(command.projectId(), command.personId());
        final PersonState person = persons.get(key);
        if (person != null && person.mergedInto() != null) {
            final PersonCommand forwarded = command.forwardedTo(person.mergedInto());
            context.forward(record.withKey(Keys.scoped(command.projectId(), person.mergedInto())).withValue(forwarded),
                    TO_PERSONS);
            return;
        }
        command.handleWith(new PersonCommand.Handler() {
            @Override
            public void apply(final PersonCommand.Apply apply) {
                PersonsProcessor.this.apply(record, key, person, apply);
            }

            @Override
            public void addDistinctId(final PersonCommand.AddDistinctId add) {
                PersonsProcessor.this.addDistinctId(record, key, person, add);
            }

            @Override
            public void markIdentified(final PersonCommand.MarkIdentified mark) {
                if (person != null) {
                    persons.put(key, person.identified());
                }
                release(record, mark.projectId(), mark.personId(), mark.held());
            }

            @Override
            public void mergeInto(final PersonCommand.MergeInto merge) {
                PersonsProcessor.this.mergeInto(record, key, person, merge);
            }

            @Override
            public void absorb(final PersonCommand.Absorb absorb) {
                PersonsProcessor.this.absorb(record, key, person, absorb);
            }
        });
    }

    private void addDistinctId(final Record<String, ?> record, final String key, final PersonState person,
                               final PersonCommand.AddDistinctId add) {
        final Set<String> joining = new LinkedHashSet<>(heldIds(add.held()));
        joining.add(add.distinctId());
        PersonState added = person != null ? person
                : empty(add.personId(), add.projectId(), add.token(), add.timestamp(), null);
        for (final String distinctId : joining) {
            added = added.withDistinctId(distinctId);
        }
        persons.put(key, added.identified());
        if (!add.personId().equals(add.mappedTo())) {
            for (final String distinctId : joining) {
                remap(record, add.token(), add.projectId(), distinctId, add.personId());
            }
        }
        followPersonless(record, add);
        release(record, add.projectId(), add.personId(), add.held());
    }

    private void apply(final Record<String, ?> record, final String key, final PersonState current,
                       final PersonCommand.Apply apply) {
        PersonState person = current;
        if (person == null) {
            person = empty(apply.personId(), apply.projectId(), apply.token(), apply.timestamp(), apply.distinctId());
        } else {
            person = person.withDistinctId(apply.distinctId());
        }
        if (!person.properties().has(CREATOR_EVENT)) {
            // Its first event, or the first after a merge created the person for a new distinct id.
            final ObjectNode initial = person.properties().deepCopy();
            initial.put(CREATOR_EVENT, apply.uuid());
            person = person.withProperties(initial);
        }
        if (apply.updates() != null && PropertyUpdates.updatesPersons(apply.event())) {
            final ObjectNode properties = person.properties().deepCopy();
            if (PropertyUpdates.apply(properties, apply.updates())) {
                person = person.withProperties(properties);
            }
        }
        if (person != current) {
            persons.put(key, person);
        }
        final TimelineEvent event = TimelineEvent.of(apply.timestamp(), apply.uuid(), apply.event(), apply.distinctId(),
                apply.groups(), apply.properties());
        context.forward(record.withKey(key).withValue(new TimelineProcessor.Append(apply.projectId(), person.uuid(), event)),
                TO_TIMELINES);
    }

    private void mergeInto(final Record<String, ?> record, final String key, final PersonState current,
                           final PersonCommand.MergeInto merge) {
        final PersonState person = current != null ? current
                : empty(merge.personId(), merge.projectId(), null, merge.timestamp(), null);
        persons.put(key, person.mergedInto(merge.target()));
        context.forward(record.withKey(Keys.scoped(merge.projectId(), merge.target()))
                .withValue(new PersonCommand.Absorb(merge.target(), person, merge.timestamp(), merge.held())), TO_PERSONS);
        context.forward(record.withKey(key).withValue(new PersonMerge(PersonMerge.VERSION, merge.projectId(),
                merge.personId(), merge.target(), person.distinctIds(), merge.timestamp())), TO_MERGES);
    }

    /** The survivor of a merge takes the source's distinct ids and the properties it lacks, as PostHog's merge. */
    private void absorb(final Record<String, ?> record, final String key, final PersonState current,
                        final PersonCommand.Absorb absorb) {
        final PersonState source = absorb.source();
        final Set<String> ids = new LinkedHashSet<>();
        final PersonState merged;
        if (current == null) {
            ids.addAll(source.distinctIds());
            ids.addAll(heldIds(absorb.held()));
            merged = new PersonState(absorb.personId(), source.projectId(), source.token(), source.createdAt(), true,
                    source.properties(), new ArrayList<>(ids), source.version() + 1, null);
        } else {
            // {...source, ...survivor}; the survivor was created by its own first event.
            final ObjectNode properties = PropertyUpdates.combine(source.properties(), current.properties());
            if (current.properties().has(CREATOR_EVENT)) {
                properties.set(CREATOR_EVENT, current.properties().get(CREATOR_EVENT));
            }
            ids.addAll(current.distinctIds());
            ids.addAll(source.distinctIds());
            ids.addAll(heldIds(absorb.held()));
            merged = new PersonState(current.uuid(), current.projectId(), current.token() != null ? current.token() : source.token(),
                    earlier(current.createdAt(), source.createdAt()), true, properties, new ArrayList<>(ids),
                    Math.max(current.version(), source.version()) + 1, null);
        }
        persons.put(key, merged);
        // From now on the source's distinct ids, and both of the merge's, resolve here directly, without the detour
        // through the stub; their held events follow the remaps.
        final Set<String> moved = new LinkedHashSet<>(source.distinctIds());
        moved.addAll(heldIds(absorb.held()));
        final String token = absorb.held() != null ? absorb.held().token() : merged.token();
        for (final String distinctId : moved) {
            remap(record, token, merged.projectId(), distinctId, merged.uuid());
        }
        release(record, merged.projectId(), merged.uuid(), absorb.held());
    }

    /**
     * The events a distinct id sent without person processing before it joined a person ({@code $process_person_profile:
     * false}: posthog-js's default {@code identified_only} mode sends a visitor's events so until {@code identify}) are
     * stored under the person uuid PostHog gives them, {@code uuidv5(project:distinct id)}. They follow the distinct id
     * to its person as a merge of that uuid, as PostHog's override of a personless distinct id makes its queries count
     * them for the person: a funnel from an anonymous first visit to a signup converts. A distinct id that sent nothing
     * moves nothing; the redirect still catches such events still on their way.
     */
    private void followPersonless(final Record<String, ?> record, final PersonCommand.AddDistinctId add) {
        final String personless = PersonIds.personUuid(add.projectId(), add.distinctId());
        if (personless.equals(add.personId())) {
            return;
        }
        context.forward(record.withKey(Keys.scoped(add.projectId(), personless)).withValue(new PersonMerge(PersonMerge.VERSION,
                add.projectId(), personless, add.personId(), List.of(add.distinctId()), add.timestamp())), TO_MERGES);
    }

    private void remap(final Record<String, ?> record, final String token, final long project, final String distinctId,
                       final String person) {
        if (token == null) {
            return;
        }
        context.forward(record.withKey(Keys.distinctIdRoute(token, distinctId))
                .withValue(new IdentityCommand.Remap(project, distinctId, person)), TO_IDENTITY);
    }

    /**
     * Lets the merge's distinct ids go on: their owners apply the events held for the merge, which now resolve to
     * {@code person}. Sent after the remaps, on the same partitions, so the owners see those first.
     */
    private void release(final Record<String, ?> record, final long project, final String person,
                         final PersonCommand.Held held) {
        if (held == null) {
            return;
        }
        for (final String distinctId : held.distinctIds()) {
            context.forward(record.withKey(Keys.distinctIdRoute(held.token(), distinctId))
                    .withValue(new IdentityCommand.Release(project, distinctId)), TO_IDENTITY);
        }
    }

    private static List<String> heldIds(final PersonCommand.Held held) {
        return held == null ? List.of() : held.distinctIds();
    }

    private static PersonState empty(final String uuid, final long project, final String token, final Instant createdAt,
                                     final String distinctId) {
        return new PersonState(uuid, project, token, createdAt, false, Json.mapper().createObjectNode(),
                distinctId == null ? List.of() : List.of(distinctId), 0, null);
    }

    private static Instant earlier(final Instant a, final Instant b) {
        if (a == null) {
            return b;
        }
        return b == null || a.isBefore(b) ? a : b;
    }
}
