package dev.eddy.topology.persons;

import dev.eddy.groups.GroupAttachment;
import dev.eddy.groups.GroupState;
import dev.eddy.groups.GroupTypes;
import dev.eddy.persons.PersonCommand;
import dev.eddy.persons.PersonLink;
import dev.eddy.persons.ProjectCommand;
import dev.eddy.stores.StoreNames;
import dev.eddy.topology.internal.Keys;
import dev.eddy.topology.internal.Warnings;
import java.util.List;
import java.util.Optional;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * One project's coordinator (keyed by project id): decides every person merge of the project, one at a time, and
 * assigns its group type indexes.
 *
 * <p>Merges follow PostHog's rules on what each side's owner saw: a new distinct id joins the other's person; if
 * the event's own person was created by the event, it is folded into the other, existing person (which
 * survives); if both persons existed, the other is merged into the event's person unless it is already
 * identified (refused, except for {@code $merge_dangerously}). Where both persons survive a merge, the survivor's
 * properties win; the merge event's own updates wait for the merge and are applied to the survivor afterwards. The
 * coordinator works on roots, following earlier merges, so merges in flight can never form a cycle; the persons'
 * owners then move the state.
 */
public final class ProjectCoordinator implements Processor<String, ProjectCommand, String, Object> {
    public static final String TO_PERSONS = "project-to-person-commands";
    public static final String TO_GROUPS = "project-to-group-commands";
    public static final String TO_GROUP_TYPES = "project-to-group-types";

    private ProcessorContext<String, Object> context;
    private KeyValueStore<String, PersonLink> links;
    private KeyValueStore<String, GroupTypes> groupTypes;
    private Warnings warnings;

    @Override
    public void init(final ProcessorContext<String, Object> context) {
        this.context = context;
        this.links = context.getStateStore(StoreNames.PERSON_LINKS);
        this.groupTypes = context.getStateStore(StoreNames.PROJECT_GROUP_TYPES);
        this.warnings = new Warnings(context, "project");
    }

    @Override
    public void process(final Record<String, ProjectCommand> record) {
        if (record.value() instanceof ProjectCommand.Merge merge) {
            merge(record, merge);
        } else if (record.value() instanceof ProjectCommand.AssignGroupTypes assign) {
            assign(record, assign);
        }
    }

    private void merge(final Record<String, ?> record, final ProjectCommand.Merge m) {
        final long project = m.projectId();
        final String mergeInto = root(project, m.mergeIntoPerson());
        // Both ids' events wait for this merge; whichever person carries it out releases them.
        final PersonCommand.Held held = new PersonCommand.Held(m.token(), List.of(m.mergeIntoDistinctId(), m.otherDistinctId()));
        if (m.otherPerson() == null) {
            // The other distinct id was new; its owner already mapped it to the event's person.
            identify(project, mergeInto);
            send(record, project, new PersonCommand.AddDistinctId(project, m.token(), mergeInto, m.otherDistinctId(),
                    m.mergeIntoPerson(), m.timestamp(), held));
            return;
        }
        final String other = root(project, m.otherPerson());
        if (other.equals(mergeInto)) {
            identify(project, mergeInto);
            send(record, project, new PersonCommand.MarkIdentified(project, mergeInto, m.timestamp(), held));
        } else if (m.mergeIntoWasNew()) {
            // Only the other distinct id had a person: the event's distinct id joins it. The event's own person
            // holds nothing of the event (which waits for the merge): it is folded in, keeping the other's properties.
            union(record, m, mergeInto, other, held);
        } else if (!m.dangerous() && identified(project, other)) {
            warnings.record("cannot_merge_already_identified");
            identify(project, mergeInto);
            send(record, project, new PersonCommand.MarkIdentified(project, mergeInto, m.timestamp(), held));
        } else {
            union(record, m, other, mergeInto, held);
        }
    }

    private void union(final Record<String, ?> record, final ProjectCommand.Merge m, final String source,
                       final String target, final PersonCommand.Held held) {
        final long project = m.projectId();
        links.put(Keys.scoped(project, source), new PersonLink(target, identified(project, source)));
        identify(project, target);
        send(record, project, new PersonCommand.MergeInto(project, source, target, m.timestamp(), held));
    }

    private void assign(final Record<String, ?> record, final ProjectCommand.AssignGroupTypes assign) {
        final long project = assign.event().projectId();
        GroupTypes types = Optional.ofNullable(groupTypes.get(Keys.project(project))).orElse(GroupTypes.none(project));
        boolean changed = false;
        for (final String type : GroupAttachment.typesNamed(assign.event())) {
            final Optional<GroupTypes> more = types.with(type);
            if (more.isEmpty()) {
                warnings.record("group_type_limit_reached");
            } else if (!more.get().equals(types)) {
                types = more.get();
                changed = true;
            }
        }
        if (changed) {
            groupTypes.put(Keys.project(project), types);
            context.forward(record.withKey(Keys.project(project)).withValue(types), TO_GROUP_TYPES);
        }
        final GroupAttachment.Resolved groups = GroupAttachment.resolve(assign.event(), types);
        GroupAttachment.addGroupProperties(assign.event(), groups.groups());
        groups.groupSet().ifPresent(set -> context.forward(record
                .withKey(GroupState.key(project, set.groupTypeIndex(), set.groupKey())).withValue(set), TO_GROUPS));
        send(record, project, PersonCommand.Apply.of(assign.event(), assign.personId(), groups.groups()));
    }

    private void send(final Record<String, ?> record, final long project, final PersonCommand command) {
        context.forward(record.withKey(Keys.scoped(project, command.personId())).withValue(command), TO_PERSONS);
    }

    /** The person {@code person} now belongs to: itself, or the survivor of the merges it went through. */
    private String root(final long project, final String person) {
        String current = person;
        for (PersonLink link = links.get(Keys.scoped(project, current)); link != null && link.parent() != null;
             link = links.get(Keys.scoped(project, current))) {
            current = link.parent();
        }
        return current;
    }

    private boolean identified(final long project, final String person) {
        final PersonLink link = links.get(Keys.scoped(project, person));
        return link != null && link.isIdentified();
    }

    private void identify(final long project, final String root) {
        if (!identified(project, root)) {
            links.put(Keys.scoped(project, root), new PersonLink(null, true));
        }
    }
}
