//! Owner invitations: an owner invites a user, who becomes an owner only
//! by accepting before the invitation expires (so nobody is put on a tool's
//! owner list without their consent). One invitation per tool and invitee;
//! inviting again renews it.

use chrono::{NaiveDateTime, TimeDelta};
use diesel::prelude::*;

use crate::db::{now, DbConnection};
use crate::encode::rfc3339;
use crate::error::AppResult;
use crate::schema::{owner_invitations, tools, users};
use crate::views::OwnerInvitation;

/// How long an invitation stays open.
pub const VALID_FOR: TimeDelta = TimeDelta::days(30);

/// One stored invitation.
#[derive(Debug, Clone, Queryable, Selectable)]
#[diesel(table_name = owner_invitations)]
pub struct InvitationRow {
    pub id: i64,
    pub tool_id: i64,
    pub invitee_id: i64,
    pub inviter_id: i64,
    pub created_at: NaiveDateTime,
    pub expires_at: NaiveDateTime,
}

impl InvitationRow {
    pub fn is_expired(&self) -> bool {
        self.expires_at <= now()
    }
}

/// Invite `invitee_id` to own `tool_id`; an open invitation is renewed.
pub fn invite(
    conn: &mut DbConnection,
    tool_id: i64,
    invitee_id: i64,
    inviter_id: i64,
) -> AppResult<()> {
    let at = now();
    let expires = at + VALID_FOR;
    let renewed = diesel::update(
        owner_invitations::table
            .filter(owner_invitations::tool_id.eq(tool_id))
            .filter(owner_invitations::invitee_id.eq(invitee_id)),
    )
    .set((
        owner_invitations::inviter_id.eq(inviter_id),
        owner_invitations::created_at.eq(at),
        owner_invitations::expires_at.eq(expires),
    ))
    .execute(conn)?;
    if renewed == 0 {
        diesel::insert_into(owner_invitations::table)
            .values((
                owner_invitations::tool_id.eq(tool_id),
                owner_invitations::invitee_id.eq(invitee_id),
                owner_invitations::inviter_id.eq(inviter_id),
                owner_invitations::created_at.eq(at),
                owner_invitations::expires_at.eq(expires),
            ))
            .execute(conn)?;
    }
    Ok(())
}

/// The invitation of `invitee_id` to own `tool_id`, expired or not.
pub fn find(
    conn: &mut DbConnection,
    tool_id: i64,
    invitee_id: i64,
) -> AppResult<Option<InvitationRow>> {
    Ok(crate::on_backend!(conn, |c| owner_invitations::table
        .filter(owner_invitations::tool_id.eq(tool_id))
        .filter(owner_invitations::invitee_id.eq(invitee_id))
        .select(InvitationRow::as_select())
        .first(c)
        .optional())?)
}

/// Delete an invitation (accepted, declined, or its invitee removed).
pub fn delete(conn: &mut DbConnection, tool_id: i64, invitee_id: i64) -> AppResult<bool> {
    let n = diesel::delete(
        owner_invitations::table
            .filter(owner_invitations::tool_id.eq(tool_id))
            .filter(owner_invitations::invitee_id.eq(invitee_id)),
    )
    .execute(conn)?;
    Ok(n > 0)
}

/// A tool's invitations, by invitee login.
pub fn for_tool(conn: &mut DbConnection, tool_id: i64) -> AppResult<Vec<OwnerInvitation>> {
    let rows = crate::on_backend!(conn, |c| owner_invitations::table
        .filter(owner_invitations::tool_id.eq(tool_id))
        .select(InvitationRow::as_select())
        .load(c))?;
    encode(conn, rows)
}

/// A user's invitations, by tool name.
pub fn for_invitee(conn: &mut DbConnection, invitee_id: i64) -> AppResult<Vec<OwnerInvitation>> {
    let rows = crate::on_backend!(conn, |c| owner_invitations::table
        .filter(owner_invitations::invitee_id.eq(invitee_id))
        .select(InvitationRow::as_select())
        .load(c))?;
    encode(conn, rows)
}

fn encode(conn: &mut DbConnection, rows: Vec<InvitationRow>) -> AppResult<Vec<OwnerInvitation>> {
    let mut out = Vec::with_capacity(rows.len());
    for row in rows {
        let tool: String = tools::table
            .find(row.tool_id)
            .select(tools::name)
            .first(conn)?;
        let invitee: String = users::table
            .find(row.invitee_id)
            .select(users::login)
            .first(conn)?;
        let inviter: String = users::table
            .find(row.inviter_id)
            .select(users::login)
            .first(conn)?;
        out.push(OwnerInvitation {
            expired: row.is_expired(),
            tool,
            invitee,
            inviter,
            created_at: rfc3339(&row.created_at),
            expires_at: rfc3339(&row.expires_at),
        });
    }
    out.sort_by(|a, b| (&a.tool, &a.invitee).cmp(&(&b.tool, &b.invitee)));
    Ok(out)
}
