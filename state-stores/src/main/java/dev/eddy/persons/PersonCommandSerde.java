package dev.eddy.persons;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.eddy.serde.Binary;
import dev.eddy.serde.Json;
import dev.eddy.serde.JsonSerde;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serializer;

/**
 * The records of {@code persons.commands}. {@link PersonCommand.Apply}, one per event, is binary: the event's
 * properties travel as the JSON bytes its timeline stores, and only its person updates are parsed on arrival. The
 * other commands, one per merge, are JSON. A record starting with {@code '{'} is JSON, whatever version wrote it
 * (version 1 wrote every command so); one starting with {@link #APPLY} is a binary apply.
 *
 * <p>Apply, version 2: {@code [2][project: 8][token][person][uuid][distinct id][event][seconds: 8][nanos: 4]
 * [group count: 4]([index][key])*[properties: length 4, JSON][updates: length 4 (-1: none), JSON]}; strings as a
 * 4-byte length (-1: null) and UTF-8, ids as {@link Binary#writeId}.
 */
public final class PersonCommandSerde implements Serde<PersonCommand> {
    /** The first byte of a binary apply record (its version): never that of a JSON document. */
    static final int APPLY = 2;
    private static final String WHAT = "a person's event";

    private final JsonSerde<PersonCommand> json = new JsonSerde<>(PersonCommand.class);

    @Override
    public Serializer<PersonCommand> serializer() {
        final Serializer<PersonCommand> others = json.serializer();
        return (topic, command) -> command instanceof PersonCommand.Apply apply ? write(apply) : others.serialize(topic, command);
    }

    @Override
    public Deserializer<PersonCommand> deserializer() {
        final Deserializer<PersonCommand> others = json.deserializer();
        return (topic, bytes) -> {
            if (bytes == null || bytes.length == 0 || bytes[0] != APPLY) {
                return others.deserialize(topic, bytes);
            }
            try {
                return read(bytes);
            } catch (final IllegalArgumentException e) {
                throw new SerializationException("cannot read " + WHAT + " from " + topic + ": " + e.getMessage(), e);
            }
        };
    }

    static byte[] write(final PersonCommand.Apply apply) {
        return Binary.write(APPLY, out -> {
            out.writeLong(apply.projectId());
            string(out, apply.token());
            Binary.writeId(out, apply.personId());
            Binary.writeId(out, apply.uuid());
            string(out, apply.distinctId());
            string(out, apply.event());
            out.writeLong(apply.timestamp().getEpochSecond());
            out.writeInt(apply.timestamp().getNano());
            out.writeInt(apply.groups().size());
            for (final Map.Entry<String, String> group : apply.groups().entrySet()) {
                string(out, group.getKey());
                string(out, group.getValue());
            }
            bytes(out, apply.properties());
            bytes(out, apply.updates() == null ? null : Json.mapper().writeValueAsBytes(apply.updates()));
        });
    }

    static PersonCommand.Apply read(final byte[] bytes) {
        return Binary.read(bytes, APPLY, WHAT, in -> {
            final long project = in.readLong();
            final String token = string(in);
            final String person = Binary.readId(in);
            final String uuid = Binary.readId(in);
            final String distinctId = string(in);
            final String event = string(in);
            final Instant timestamp = Instant.ofEpochSecond(in.readLong(), in.readInt());
            final int groupCount = in.readInt();
            if (groupCount < 0 || groupCount > 5) {
                throw new IllegalArgumentException("an event with " + groupCount + " groups");
            }
            final Map<String, String> groups = new HashMap<>();
            for (int i = 0; i < groupCount; i++) {
                groups.put(string(in), string(in));
            }
            final byte[] properties = bytes(in);
            final byte[] updates = bytes(in);
            return new PersonCommand.Apply(project, token, person, uuid, distinctId, event, timestamp, groups,
                    properties == null ? new byte[0] : properties, updates == null ? null : (ObjectNode) Json.mapper().readTree(updates));
        });
    }

    private static void string(final DataOutputStream out, final String value) throws IOException {
        bytes(out, value == null ? null : value.getBytes(StandardCharsets.UTF_8));
    }

    private static String string(final DataInputStream in) throws IOException {
        final byte[] bytes = bytes(in);
        return bytes == null ? null : new String(bytes, StandardCharsets.UTF_8);
    }

    private static void bytes(final DataOutputStream out, final byte[] value) throws IOException {
        if (value == null) {
            out.writeInt(-1);
        } else {
            out.writeInt(value.length);
            out.write(value);
        }
    }

    private static byte[] bytes(final DataInputStream in) throws IOException {
        final int length = in.readInt();
        if (length < -1 || length > in.available()) {
            throw new IllegalArgumentException("a field longer than the record");
        }
        return length == -1 ? null : in.readNBytes(length);
    }
}
