// Drives posthog-js-lite (npm; @posthog/core inside, the core posthog-react-native runs on too) against Eddy from node,
// as a small web or React Native app would: anonymous events, identify, a group, flags. Prints what it saw as JSON.
// Usage: node posthog-js-lite-check.mjs <host> <project token> <distinct id> <flag key> <run>
import { PostHog } from 'posthog-js-lite';

const [host, token, distinctId, flagKey, run] = process.argv.slice(2);

const posthog = new PostHog(token, { host, persistence: 'memory', flushAt: 1, flushInterval: 0, preloadFeatureFlags: false });
const anonymousId = posthog.getDistinctId();
posthog.capture(`lite before ${run}`, { step: 1 });
posthog.identify(distinctId, { plan: 'pro', sdk: 'posthog-js-lite' });
posthog.group('company', `lite-${run}`, { name: 'Lite Ltd' });
posthog.capture(`lite after ${run}`, { step: 2 });
const flags = await posthog.reloadFeatureFlagsAsync();
const flag = posthog.getFeatureFlag(flagKey);
await posthog.shutdown();
console.log(JSON.stringify({ anonymousId, flags, flag }));
