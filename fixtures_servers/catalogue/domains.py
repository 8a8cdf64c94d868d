"""The catalogue's domains: eight servers of a company's internal tools, each a table of resources. A resource row
is `singular | what it is | statuses | fields`, where a field is `name:type` (`str`, `int`, `number`, `bool`,
`date`, or `a/b/c` for an enum). The first resource of the first four domains is the one the tasks use (its tools
are written by hand in `core`); every other resource gets the generated operations of `operations`."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Field:
    name: str
    kind: str  # str | int | number | bool | date | enum
    choices: tuple[str, ...] = ()


@dataclass(frozen=True)
class Resource:
    domain: str
    singular: str
    what: str
    statuses: tuple[str, ...]
    fields: tuple[Field, ...]

    @property
    def plural(self) -> str:
        if self.singular.endswith("y") and self.singular[-2] not in "aeiou":
            return self.singular[:-1] + "ies"
        if self.singular.endswith(("s", "sh", "ch", "x")):
            return self.singular + "es"
        return self.singular + "s"

    @property
    def label(self) -> str:
        return self.singular.replace("_", " ")

    @property
    def id_prefix(self) -> str:
        return "".join(part[0] for part in self.singular.split("_")).upper() + self.singular[1:3].upper()


DOMAINS: dict[str, str] = {
    "cat_people": "People: the employee directory, departments, leave, payroll and hiring",
    "cat_sales": "Sales: customer accounts, opportunities, quotes, contracts and forecasts",
    "cat_billing": "Billing: invoices, payments, subscriptions, credits and the ledger",
    "cat_helpdesk": "Helpdesk: support tickets, queues, SLAs, macros and the knowledge base",
    "cat_devops": "DevOps: services, deployments, incidents, alerts and on-call",
    "cat_marketing": "Marketing: campaigns, audiences, email templates, events and content",
    "cat_legal": "Legal: agreements, compliance policies, data requests and filings",
    "cat_facilities": "Facilities: offices, rooms, desks, visitors, parking and supplies",
}

_TABLE = {
    "cat_people": """
employee | a person employed by the company | active/on_leave/departed | email:str, department:str, manager_id:str
department | an organisational unit with a head and a cost center | active/merged/closed | cost_center:str, head_id:str
position | an approved role in the org chart | open/filled/frozen | level:L1/L2/L3/L4/L5, department:str
leave_request | a request for paid or unpaid time off | pending/approved/rejected/cancelled | days:number, kind:vacation/sick/parental/unpaid
payroll_run | a monthly or off-cycle payroll batch | draft/locked/paid | period:str, gross_total:number
benefit_plan | a health, pension or perk plan employees enrol in | active/retired | provider:str, monthly_cost:number
onboarding_task | a checklist item for a new hire's first weeks | todo/done/skipped | due_on:date, hire_id:str
performance_review | a periodic review of an employee's work | scheduled/in_progress/submitted/calibrated | cycle:str, rating:1/2/3/4/5
training_course | an internal or external course | published/draft/retired | hours:number, mandatory:bool
timesheet | a week of logged hours | open/submitted/approved | week:str, hours:number
job_opening | a published vacancy | draft/open/on_hold/closed | location:str, remote:bool
candidate | an applicant in the hiring pipeline | applied/screening/interviewing/offer/hired/rejected | opening_id:str, source:referral/job_board/agency/direct
expense_claim | an employee's claim for reimbursed expenses | submitted/approved/reimbursed/rejected | amount:number, currency:EUR/USD/GBP
""",
    "cat_sales": """
account | a customer company | active/churned/prospect | region:EMEA/AMER/APAC, owner_id:str
opportunity | a potential deal with an account | qualifying/proposal/negotiation/won/lost | amount:number, close_date:date
lead | an inbound or outbound prospect not yet qualified | new/contacted/qualified/disqualified | source:web/event/outbound/partner, score:int
quote | a priced offer sent to a customer | draft/sent/accepted/expired | total:number, valid_until:date
contract | a signed agreement with a customer | draft/active/renewal_due/terminated | value:number, ends_on:date
sales_territory | a set of regions and accounts owned by a team | active/inactive | region:EMEA/AMER/APAC, quota:number
forecast | a quarterly revenue forecast | open/submitted/final | quarter:str, committed:number
price_book | a list of product prices for a market | active/draft/archived | currency:EUR/USD/GBP, market:str
product_bundle | a package of products sold together | active/retired | list_price:number, sku:str
partner | a reseller or referral partner | prospect/active/suspended | tier:silver/gold/platinum, country:str
meeting_note | notes from a call or meeting with a customer | draft/shared | account_ref:str, held_on:date
sales_task | a follow-up a sales rep has to do | open/done/overdue | due_on:date, assignee:str
""",
    "cat_billing": """
invoice | a bill sent to an account | draft/open/paid/overdue/void | amount:number, due_on:date
payment | money received against invoices | pending/succeeded/failed/refunded | amount:number, method:card/transfer/direct_debit
credit_note | a credit issued against an invoice | draft/issued/applied | amount:number, reason:str
subscription | an account's recurring plan | trialing/active/past_due/canceled | plan:str, seats:int
tax_rate | a tax rate applied to invoice lines | active/inactive | percentage:number, jurisdiction:str
refund | money returned to a customer | requested/approved/paid/rejected | amount:number, payment_ref:str
billing_plan | a priced plan customers subscribe to | public/legacy/hidden | interval:month/year, price:number
coupon | a discount code for subscriptions | active/expired/disabled | percent_off:number, max_redemptions:int
usage_record | metered usage reported for a subscription | recorded/billed | quantity:number, metric:str
dunning_notice | a reminder sent for an unpaid invoice | scheduled/sent/resolved | step:1/2/3, sent_on:date
ledger_entry | a line of the general ledger | posted/reversed | debit:number, credit:number
payout | a transfer from the payment provider to the bank | in_transit/paid/failed | amount:number, arrival_date:date
customer_balance | the prepaid or owed balance of an account | positive/zero/negative | amount:number, currency:EUR/USD/GBP
""",
    "cat_helpdesk": """
ticket | a customer support request | open/pending/solved/closed | priority:low/normal/high/urgent, assignee_id:str
macro | a saved set of ticket actions | active/inactive | category:str, uses:int
sla_policy | response and resolution targets per priority | active/draft | first_reply_hours:number, resolve_hours:number
knowledge_article | a help-center article | draft/published/archived | locale:str, views:int
support_queue | a queue tickets are routed to | open/paused | channel:email/chat/phone/web, backlog:int
canned_response | a reusable reply text | active/archived | language:str, shortcut:str
satisfaction_survey | a CSAT survey sent after a ticket is solved | sent/answered/expired | rating:1/2/3/4/5, ticket_ref:str
escalation_rule | a rule that raises a ticket's priority | enabled/disabled | after_hours:number, target_priority:high/urgent
agent_shift | a support agent's working shift | planned/active/finished | starts_at:str, queue:str
chat_transcript | a saved live-chat conversation | open/closed | channel:web/mobile, messages:int
ticket_form | a form customers fill to open tickets | active/inactive | fields_count:int, brand:str
feedback_entry | a product feedback item from customers | new/triaged/planned/declined | votes:int, area:str
""",
    "cat_devops": """
deployment | a release of a service to an environment | queued/running/succeeded/failed/rolled_back | service:str, environment:production/staging/dev
service | a running application or API | healthy/degraded/down | tier:1/2/3, language:str
incident | an unplanned outage or degradation | investigating/identified/monitoring/resolved | severity:sev1/sev2/sev3/sev4, commander_id:str
alert_rule | a monitoring rule that pages on-call | enabled/muted/disabled | threshold:number, metric:str
runbook | step-by-step operating instructions | current/outdated | service:str, steps:int
build | a CI build of a commit | queued/running/passed/failed | commit:str, duration_s:number
repository | a source code repository | active/archived | default_branch:str, visibility:public/internal/private
feature_flag | a toggle that enables code paths | on/off/rollout | rollout_percent:int, owner_team:str
secret | a stored credential used by services | active/rotating/revoked | scope:str, expires_on:date
cluster | a Kubernetes cluster | provisioning/ready/draining | region:str, nodes:int
on_call_schedule | a rotation of engineers who answer pages | active/paused | team:str, rotation_days:int
status_page | a public page showing service status | operational/degraded/outage | url:str, subscribers:int
""",
    "cat_marketing": """
campaign | a multi-channel marketing campaign | planned/running/paused/finished | budget:number, channel:email/social/search/display
email_template | a reusable email layout | draft/approved/archived | subject:str, language:str
audience_segment | a saved group of contacts | static/dynamic | size:int, criteria:str
landing_page | a page built for a campaign | draft/live/unpublished | url:str, conversions:int
newsletter | a recurring email to subscribers | scheduled/sent/cancelled | issue:int, send_on:date
ad_group | a set of ads sharing a budget | active/paused/removed | daily_budget:number, network:search/social/display
webinar | an online event with registrations | scheduled/live/ended | starts_on:date, registrants:int
social_post | a post on a social network | draft/scheduled/published | network:linkedin/x/instagram, likes:int
utm_link | a tracked link for attribution | active/expired | source:str, medium:str
content_brief | a brief for a piece of content | draft/approved/in_production/published | format:blog/video/ebook/case_study, due_on:date
brand_asset | a logo, image or font in the brand library | approved/deprecated | format:png/svg/pdf, usage:str
event_booth | a booth at a trade show | planned/confirmed/cancelled | event_name:str, cost:number
""",
    "cat_legal": """
nda | a non-disclosure agreement | draft/sent/signed/expired | counterparty:str, mutual:bool
contract_clause | a reusable clause for agreements | approved/draft/retired | topic:str, risk:low/medium/high
compliance_policy | an internal policy with an owner | draft/active/under_review/retired | framework:SOC2/ISO27001/GDPR/HIPAA, owner:str
data_request | a data subject access or deletion request | received/verifying/fulfilled/rejected | kind:access/deletion/correction, due_on:date
trademark | a registered or pending trademark | pending/registered/lapsed | jurisdiction:str, class_number:int
litigation_case | a lawsuit or dispute | open/settled/dismissed/closed | court:str, exposure:number
vendor_agreement | an agreement with a supplier | negotiating/active/expired | vendor:str, annual_value:number
audit_finding | a finding from an internal or external audit | open/remediating/closed | severity:low/medium/high/critical, control:str
retention_rule | how long a kind of record is kept | active/suspended | record_type:str, years:int
consent_record | a person's recorded consent | granted/withdrawn | purpose:str, recorded_on:date
regulatory_filing | a filing submitted to a regulator | preparing/filed/accepted/rejected | regulator:str, due_on:date
legal_hold | an order to preserve records for a case | active/released | case_ref:str, custodians:int
""",
    "cat_facilities": """
office | a company office | open/closed/renovating | city:str, capacity:int
meeting_room | a bookable room in an office | available/out_of_service | seats:int, has_video:bool
desk_booking | a reserved desk for a day | booked/checked_in/cancelled | desk:str, day:date
visitor | a guest registered to visit an office | expected/checked_in/left | host_id:str, visit_on:date
parking_space | a parking space assigned or bookable | free/assigned/blocked | level:str, ev_charger:bool
maintenance_request | a repair or maintenance job | open/scheduled/done | location:str, urgency:low/normal/high
asset_tag | a tagged piece of equipment | in_use/in_storage/retired | category:laptop/monitor/phone/furniture, serial:str
shipment | an incoming or outgoing parcel | pending/in_transit/delivered/returned | carrier:str, weight_kg:number
supply_order | an order of office supplies | draft/ordered/received | supplier:str, total:number
badge | an access badge for doors | active/lost/deactivated | holder_id:str, zones:str
floor_plan | a floor plan of an office | current/draft | floor:int, desks:int
cleaning_schedule | a recurring cleaning plan for an area | active/paused | area:str, frequency:daily/weekly/monthly
""",
}


def _field(text: str) -> Field:
    name, kind = (part.strip() for part in text.split(":"))
    if "/" in kind:
        return Field(name, "enum", tuple(kind.split("/")))
    return Field(name, kind)


def _resources() -> tuple[Resource, ...]:
    found = []
    for domain, table in _TABLE.items():
        for line in table.strip().splitlines():
            singular, what, statuses, fields = (part.strip() for part in line.split("|"))
            found.append(Resource(domain, singular, what, tuple(statuses.split("/")),
                                  tuple(_field(f) for f in fields.split(","))))
    return tuple(found)


RESOURCES: tuple[Resource, ...] = _resources()
CORE_RESOURCES = tuple(r.singular for r in RESOURCES if r.singular in ("employee", "account", "invoice", "ticket"))
assert len({r.singular for r in RESOURCES}) == len(RESOURCES), "resource names are unique across domains"
