/** Credits: the organization's balance and ledger; top-ups and corrections. */
import { useState } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { post } from '../api';
import { Card, ErrorNote, Field, Page, Query, usd, useAction, useGet, when } from '../ui';

interface Entry {
  id: string;
  amount_usd: number;
  kind: string;
  note: string | null;
  created_at: string;
}

export function Credits() {
  const qc = useQueryClient();
  const balance = useGet<{ data: { total_credits: number; total_usage: number } }>('/credits');
  const ledger = useGet<{ data: Entry[] }>('/credits/adjustments?limit=100');
  const [amount, setAmount] = useState('');
  const [kind, setKind] = useState('top_up');
  const [note, setNote] = useState('');
  const add = useAction(async () => {
    await post('/credits/adjustments', { amount_usd: Number(amount), kind, note: note || null });
    setAmount('');
    setNote('');
    await qc.invalidateQueries();
  });
  return (
    <Page title="Credits" intro="The organization's prepaid balance. Requests are refused with 402 once it is spent when the gateway runs with GATEWAY_CREDITS=true.">
      <Query q={balance}>
        {({ data }) => (
          <dl className="tiles">
            <div className="tile">
              <dt>Credits</dt>
              <dd>{usd(data.total_credits, 2)}</dd>
            </div>
            <div className="tile">
              <dt>Used</dt>
              <dd>{usd(data.total_usage, 4)}</dd>
            </div>
            <div className="tile">
              <dt>Remaining</dt>
              <dd>{usd(data.total_credits - data.total_usage, 4)}</dd>
            </div>
          </dl>
        )}
      </Query>
      <Card title="Add credits or correct the balance">
        <form
          className="toolbar"
          onSubmit={(e) => {
            e.preventDefault();
            void add.run();
          }}
        >
          <Field label="Amount (USD)">{(id) => <input id={id} type="number" step="any" value={amount} onChange={(e) => setAmount(e.target.value)} required />}</Field>
          <Field label="Kind">
            {(id) => (
              <select id={id} value={kind} onChange={(e) => setKind(e.target.value)}>
                <option value="top_up">top-up</option>
                <option value="adjustment">adjustment</option>
              </select>
            )}
          </Field>
          <Field label="Note">{(id) => <input id={id} value={note} onChange={(e) => setNote(e.target.value)} />}</Field>
          <div className="field-actions">
            <button type="submit" disabled={add.busy}>
              Record
            </button>
          </div>
        </form>
        <ErrorNote error={add.error} />
      </Card>
      <Card title="Ledger">
        <Query q={ledger}>
          {({ data }) =>
            data.length === 0 ? (
              <p className="muted">No credit has been added yet. Record a top-up above.</p>
            ) : (
              <table>
                <caption className="sr-only">Credit ledger</caption>
                <thead>
                  <tr>
                    <th scope="col">When</th>
                    <th scope="col">Kind</th>
                    <th scope="col" className="num">Amount</th>
                    <th scope="col">Note</th>
                  </tr>
                </thead>
                <tbody>
                  {data.map((e) => (
                    <tr key={e.id}>
                      <td>{when(e.created_at)}</td>
                      <td>{e.kind}</td>
                      <td className="num">{usd(e.amount_usd, 2)}</td>
                      <td>{e.note ?? ''}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )
          }
        </Query>
      </Card>
    </Page>
  );
}
