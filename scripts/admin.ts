// Operator CLI over the Temporal client:
//   npm run admin -- show <payment-uuid>     live state of the deposit workflow (status query) and its history state
//   npm run admin -- resend <payment-uuid>   redeliver the stored confirmed snapshot (after the six attempts)
// TEMPORAL_ADDRESS (default 127.0.0.1:7233, the embedded dev server) and TEMPORAL_NAMESPACE select the cluster.
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export async function findPaymentWorkflow(client: Client, uuid: string): Promise<WorkflowHandle> {
  if (!UUID.test(uuid)) throw new Error(`not a payment UUID: ${uuid}`);
  for await (const wf of client.workflow.list({ query: `GatewayPaymentUuid = "${uuid}"` })) {
    return client.workflow.getHandle(wf.workflowId, wf.runId);
  }
  throw new Error(`no workflow for payment ${uuid} (is the search attribute GatewayPaymentUuid registered?)`);
}

export async function runAdmin(argv: string[], out: (line: string) => void = console.log): Promise<number> {
  const [command, uuid] = argv;
  if (!['show', 'resend'].includes(command ?? '') || !uuid) {
    out('usage: npm run admin -- show <payment-uuid> | resend <payment-uuid>');
    return 2;
  }
  const connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS || '127.0.0.1:7233' });
  try {
    const client = new Client({ connection, namespace: process.env.TEMPORAL_NAMESPACE || 'default' });
    const handle = await findPaymentWorkflow(client, uuid);
    if (command === 'show') {
      const description = await handle.describe();
      const status = await handle.query('status');
      out(JSON.stringify({ workflowId: handle.workflowId, execution: description.status.name, status }, null, 2));
    } else {
      await handle.signal('resend');
      out(`resend requested for payment ${uuid} (workflow ${handle.workflowId})`);
    }
    return 0;
  } finally {
    await connection.close();
  }
}

if (require.main === module) {
  runAdmin(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (e) => {
      console.error(e instanceof Error ? e.message : String(e));
      process.exit(1);
    },
  );
}
