// Drives the real posthog-node SDK against Eddy, as an application would, and prints what it saw as JSON.
// Usage: node posthog-node-check.mjs identify|flags <host> <project token> <personal API key> <distinct id>
import { PostHog } from 'posthog-node'

const [mode, host, token, personalKey, distinctId] = process.argv.slice(2)

if (mode === 'identify') {
  const client = new PostHog(token, { host, flushAt: 1, flushInterval: 0 })
  client.identify({ distinctId, properties: { plan: 'pro', sdk: 'posthog-node' } })
  client.capture({ distinctId, event: 'node sdk event', properties: { answer: 42 } })
  await client.shutdown()
  console.log(JSON.stringify({ sent: 2 }))
} else {
  const remote = new PostHog(token, { host, flushAt: 1, flushInterval: 0 })
  const remoteFlags = await remote.getAllFlags(distinctId)
  const remotePayload = await remote.getFeatureFlagPayload('pro-users', distinctId)
  await remote.shutdown()

  const local = new PostHog(token, { host, personalApiKey: personalKey, featureFlagsPollingInterval: 600000 })
  await local.reloadFeatureFlags()
  const localFlags = await local.getAllFlags(distinctId, { personProperties: { plan: 'pro' }, onlyEvaluateLocally: true })
  await local.shutdown()
  console.log(JSON.stringify({ remoteFlags, remotePayload, localFlags }))
}
